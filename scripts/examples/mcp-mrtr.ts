// The agent's question as this client's own form, through MRTR (2026-07-28): the official v2 client negotiates the
// revision, and its built-in driver answers `input_required` by calling the elicitation handler, then retries by itself.
//   npm run -s example:mcp-mrtr -- "/choose Which theme? | Light | Dark"
// BASE, TOKEN and PROJECT (what `eval "$(npm run -s token -- --shell)"` sets) say where and as whom.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const { BASE = "http://127.0.0.1:8787", TOKEN, PROJECT = "00000000-0000-4000-8000-000000000001" } = process.env;
const content = process.argv[2] ?? "/choose Which theme? | Light | Dark";
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

const chat = await (await fetch(`${BASE}/v1/projects/${PROJECT}/chats`, { method: "POST", headers, body: JSON.stringify({ title: "MRTR example" }) })).json();
const client = new Client({ name: "mrtr-example", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {}, url: {} } } });
// A host shows its own form here; this one answers as a person might: the last option, approve, or "connected".
client.setRequestHandler("elicitation/create", async ({ params }) => {
  console.log(`asked (${params.mode}): ${params.message}`);
  if (params.mode === "url") return { action: "accept" };
  const fields = (params.requestedSchema.properties ?? {}) as Record<string, { oneOf?: { const: string }[] }>;
  if (fields.decision) return { action: "accept", content: { decision: "approve" } };
  if (fields.choice) return { action: "accept", content: { choice: fields.choice.oneOf!.at(-1)!.const } };
  return { action: "accept", content: { text: "Ada" } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers } }));
const result = await client.callTool({ name: "send_message", arguments: { projectId: PROJECT, chatId: chat.id, content, waitSeconds: 30 } });
const { answered, reply } = result.structuredContent as { answered: unknown[]; reply: { content: string } };
console.log(`revision ${client.getNegotiatedProtocolVersion()}, ${answered.length} question answered, reply: ${reply.content}`);
await client.close();
