// A long send as an MCP task (2026-07-28, the Tasks extension) with @modelcontextprotocol/ext-tasks: the task goes
// input_required at the agent's question, onInputRequest answers it, and settle() returns the tool's result.
//   npm run -s example:mcp-tasks -- "/approve deploy"
// BASE, TOKEN and PROJECT (what `eval "$(npm run -s token -- --shell)"` sets) say where and as whom.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type RawClientDispatch } from "@modelcontextprotocol/ext-tasks/client";

const { BASE = "http://127.0.0.1:8787", TOKEN, PROJECT = "00000000-0000-4000-8000-000000000001" } = process.env;
const content = process.argv[2] ?? "/approve deploy";
const clientCapabilities = { elicitation: { form: {}, url: {} } };

// One framed 2026-07-28 request per POST: the method and its tool or task in Mcp-Method and Mcp-Name, as the revision asks.
let id = 0;
const rawDispatch: RawClientDispatch = async (request, options) => {
  const body = { jsonrpc: "2.0", id: ++id, ...(request as { method: string; params?: { name?: string; taskId?: string } }) };
  const headers = new Headers(options?.context?.headers as HeadersInit | undefined);
  headers.set("authorization", `Bearer ${TOKEN}`);
  headers.set("content-type", "application/json");
  headers.set("accept", "application/json, text/event-stream");
  headers.set("mcp-protocol-version", "2026-07-28");
  headers.set("mcp-method", body.method);
  const name = body.params?.name ?? body.params?.taskId;
  if (name !== undefined) headers.set("mcp-name", name);
  const response = await fetch(`${BASE}/mcp`, { method: "POST", headers, body: JSON.stringify(body), signal: options?.signal });
  return response.json();
};

const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const chat = await (await fetch(`${BASE}/v1/projects/${PROJECT}/chats`, { method: "POST", headers, body: JSON.stringify({ title: "Tasks example" }) })).json();
const client = new Client({ name: "tasks-example", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: clientCapabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers } }));
const session = createTaskSessionFromClient(client, {
  endpointId: "project-chat",
  rawDispatch,
  v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: { name: "tasks-example", version: "1.0.0" }, clientCapabilities },
  // A host shows its own form; this one approves, picks the first option, or says the connection is made.
  onInputRequest: async (request) => {
    const params = request.params as { mode?: string; message: string; requestedSchema?: { properties: Record<string, { oneOf?: { const: string }[] }> } };
    console.log(`asked (${params.mode ?? "form"}): ${params.message}`);
    const fields = params.requestedSchema?.properties ?? {};
    if (fields.decision) return { action: "accept", content: { decision: "approve" } };
    if (fields.choice) return { action: "accept", content: { choice: fields.choice.oneOf![0]!.const } };
    return { action: "accept", ...(params.mode === "url" ? {} : { content: { text: "Ada" } }) };
  },
});
try {
  const execution = await session.callTool("send_message", { projectId: PROJECT, chatId: chat.id, content }, { task: { preference: "require" } });
  const { outcome } = await execution.settle();
  if (outcome.status !== "completed") throw new Error(`the task ended ${outcome.status}`);
  const { answered, reply } = outcome.result.structuredContent as { answered: unknown[]; reply: { content: string } };
  console.log(`task completed, ${answered.length} question answered, reply: ${reply.content}`);
} finally {
  await session.close();
  await client.close();
}
