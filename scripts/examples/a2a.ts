// A project's agent from another agent's side, with @a2a-js/sdk's own client (ClientFactory): discovery from the card, a
// blocking send answered through its questions with the same taskId, a stream and its resume, a cancel, a push to a
// receiver here (signed with its config's token), a v0.3 client.
//   npm run -s example:a2a -- "/choose Which theme? | Light | Dark"
// BASE, TOKEN and PROJECT (what `eval "$(npm run -s token -- --shell)"` sets) say where and as whom.
import { type Message, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const { BASE = "http://127.0.0.1:8787", TOKEN, PROJECT = "00000000-0000-4000-8000-000000000001" } = process.env;
const content = process.argv[2] ?? "/choose Which theme? | Light | Dark";
const EVENT_ID = "urn:project-chat:a2a:event-id:v1";

// The token goes on every call to the agent (the card is public); legacyCompat lets the factory speak v0.3 too.
const withToken: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  return fetch(input, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: withToken, legacyCompat: { enabled: true } })] }),
);
// The agent's URL with its trailing slash: the card is resolved relative to it.
const client = await factory.createFromUrl(`${BASE}/a2a/projects/${PROJECT}/`);
const card = await client.getAgentCard();
console.log(`discovered: ${card.name}, A2A ${client.protocolVersion}`);

let sent = 0;
const message = (text: string, ids: { taskId?: string; contextId?: string } = {}): Message => ({
  messageId: `example-${Date.now()}-${++sent}`,
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = async (m: Message, returnImmediately = false) => {
  const answer = await client.sendMessage({
    tenant: "",
    message: m,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  });
  if (!("status" in answer)) throw new Error("the agent answered a message, not a task");
  return answer as Task;
};
const stateOf = (task: Task) => TaskState[task.status!.state].replace("TASK_STATE_", "");
const textOf = (task: Task) =>
  task.artifacts
    .at(-1)
    ?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join("") ?? "";

// A person would decide; this one picks the first option, approves, gives a name, or says the connection is made.
function answerFor(task: Task): string {
  const question = task.status!.message!.parts.find((p) => p.content?.$case === "data")?.content?.value as { kind: string; options: { label: string }[] | null };
  if (question.kind === "choice") return question.options![0]!.label;
  if (question.kind === "approval") return "approve";
  return question.kind === "text" ? "Ada" : "done";
}

// A blocking send, answered through its questions with the same taskId, until it ends.
let task = await send(message(content));
const chatId = task.contextId;
let answered = 0;
while (task.status!.state === TaskState.TASK_STATE_INPUT_REQUIRED || task.status!.state === TaskState.TASK_STATE_AUTH_REQUIRED) {
  const prompt = task.status!.message!.parts[0]?.content;
  console.log(`asked (${stateOf(task)}): ${prompt?.$case === "text" ? prompt.value.split("\n")[0] : ""}`);
  task = await send(message(answerFor(task), { taskId: task.id }));
  answered++;
}
console.log(`task ${stateOf(task)}, ${answered} question${answered === 1 ? "" : "s"} answered, reply: ${textOf(task)}`);

// A stream, then a resume after its second event: the rest again, nothing missing, nothing repeated.
const idOf = (event: StreamResponse) => (event.payload?.value as { metadata?: Record<string, { eventId?: string }> } | undefined)?.metadata?.[EVENT_ID]?.eventId;
const streamed: StreamResponse[] = [];
for await (const event of client.sendMessageStream({ tenant: "", message: message("Stream me", { contextId: chatId }), configuration: undefined, metadata: undefined })) {
  streamed.push(event);
}
const streamTask = streamed[0]!.payload!.value as Task;
const cut = streamed.findIndex((event, i) => i > 0 && idOf(event) !== undefined);
const replayed: StreamResponse[] = [];
for await (const event of client.resubscribeTask({ tenant: "", id: streamTask.id }, { serviceParameters: { "Last-Event-ID": idOf(streamed[cut]!)! } })) replayed.push(event);
const same = JSON.stringify(replayed.map(idOf)) === JSON.stringify(streamed.slice(cut + 1).map(idOf));
console.log(
  `stream: ${streamed.length} events; resumed after event ${idOf(streamed[cut]!)}: ${replayed.length} events, ${same ? "the same as the stream's rest" : "NOT the stream's rest"}`,
);

// A cancel: the second message waits behind the first, and leaves the queue for good.
await send(message("First in line", { contextId: chatId }), true);
const waiting = await send(message("Second in line", { contextId: chatId }), true);
const cancelled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
console.log(`cancel: ${stateOf(waiting)} -> ${stateOf(cancelled)}`);

// A push: a receiver here, and a config with a token on a task waiting behind the first; each state it enters is POSTed,
// signed (Standard Webhooks) with the token's bytes, and the config is listed without the token.
const pushToken = crypto.randomUUID();
const pushed: string[] = [];
const receiver = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const [id, timestamp, signature] = ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => String(req.headers[name] ?? ""));
    const expected = createHmac("sha256", pushToken).update(`${id}.${timestamp}.${body}`).digest();
    const given = Buffer.from(signature.slice(3), "base64");
    const signed = signature.startsWith("v1,") && given.length === expected.length && timingSafeEqual(given, expected);
    const event = JSON.parse(body) as { statusUpdate?: { status: { state: string } }; task?: { status: { state: string } } };
    pushed.push(`${(event.statusUpdate ?? event.task)!.status.state.replace("TASK_STATE_", "")}${signed ? "" : " (NOT signed with the token)"}`);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const pushUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
const later = await send(message("Tell my receiver", { contextId: chatId }), true);
await client.createTaskPushNotificationConfig({ tenant: "", id: "example", taskId: later.id, url: pushUrl, token: pushToken, authentication: undefined });
const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: later.id, pageSize: 0, pageToken: "" });
for (let waited = 0; !pushed.some((state) => state.startsWith("COMPLETED")) && waited < 20_000; waited += 250) await new Promise((r) => setTimeout(r, 250));
receiver.close();
const tokenHidden = listed.configs.length === 1 && listed.configs[0]!.token === "";
console.log(`push: ${pushed.join(" -> ")}; listed ${listed.configs.length} config, ${tokenHidden ? "its token not shown" : "its token SHOWN"}`);

// A v0.3 client: the same agent through the card's 0.3 interface.
const legacy = await factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3") });
const old = await legacy.sendMessage({ tenant: "", message: message("Hello from v0.3", { contextId: chatId }), configuration: undefined, metadata: undefined });
console.log(`v0.3 client: A2A ${legacy.protocolVersion}, task ${stateOf(old as Task)}`);
const pushOk = pushed.at(-1) === "COMPLETED" && tokenHidden;
if (!same || stateOf(task) !== "COMPLETED" || stateOf(cancelled) !== "CANCELED" || !pushOk) process.exit(1);
