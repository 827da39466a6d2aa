// A client written against types generated from the served OpenAPI document (openapi-typescript +
// openapi-fetch): if a change breaks generated clients, this stops compiling or fails at run time.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.d.ts";

type Problem = components["schemas"]["Problem"];
const [baseUrl, email, password, projectId] = process.argv.slice(2);
if (!baseUrl || !email || !password || !projectId) throw new Error("usage: client.ts BASE_URL EMAIL PASSWORD PROJECT_ID");

function must<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(`${what}: HTTP ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

const client = createClient<paths>({ baseUrl });
const session = must("signIn", await client.POST("/auth/token", { body: { email, password } }));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
const created = must(
  "createApiToken",
  await client.POST("/auth/api-tokens", {
    headers: bearer(session.token),
    body: { name: "generated client", scopes: ["chat:read", "chat:write"], expiresAt },
  }),
);
const api = createClient<paths>({ baseUrl, headers: bearer(created.token) });
const project = { projectId };

const chat = must("createChat", await api.POST("/v1/projects/{projectId}/chats", { params: { path: project }, body: { title: "Generated client" } }));
const chatPath = { projectId, chatId: chat.id };
const sent = await api.POST("/v1/projects/{projectId}/chats/{chatId}/messages", {
  params: { path: chatPath, header: { "idempotency-key": crypto.randomUUID() } },
  body: { content: "Hello from a generated client" },
});
const submission = must("sendMessage", sent);
if (sent.response.status !== 202 || !["started", "queued"].includes(submission.disposition)) throw new Error("sendMessage: expected 202 with a disposition");
if (!sent.response.headers.get("ratelimit")) throw new Error("sendMessage: no RateLimit header");

const queue = must("getQueue", await api.GET("/v1/projects/{projectId}/chats/{chatId}/queue", { params: { path: chatPath } }));
let history = must("listMessages", await api.GET("/v1/projects/{projectId}/chats/{chatId}/messages", { params: { path: chatPath, query: { limit: 10 } } }));
for (let tries = 0; !history.items.some((m) => m.role === "owner" && m.status === "success") && tries < 50; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  history = must("listMessages", await api.GET("/v1/projects/{projectId}/chats/{chatId}/messages", { params: { path: chatPath, query: { limit: 10 } } }));
}
if (!history.items.some((m) => m.role === "owner" && m.status === "success")) throw new Error("listMessages: the agent's reply never finished");

// Control of running work through the same generated types: a task that runs, one queued behind it and cancelled, a steer, a stop.
const key = () => ({ "idempotency-key": crypto.randomUUID() });
const running = must("sendMessage", await api.POST("/v1/projects/{projectId}/chats/{chatId}/messages", { params: { path: chatPath, header: key() }, body: { content: "Run me" } }));
const waiting = must("sendMessage", await api.POST("/v1/projects/{projectId}/chats/{chatId}/messages", { params: { path: chatPath, header: key() }, body: { content: "Wait" } }));
const cancelled = await api.DELETE("/v1/projects/{projectId}/chats/{chatId}/queue/{submissionId}", { params: { path: { ...chatPath, submissionId: waiting.submissionId } } });
if (waiting.disposition !== "queued" || cancelled.response.status !== 204)
  throw new Error(`cancelSubmission: HTTP ${cancelled.response.status} ${JSON.stringify(cancelled.error)}`);
must("steerChat", await api.POST("/v1/projects/{projectId}/chats/{chatId}/steer", { params: { path: chatPath, header: key() }, body: { content: "Steer it" } }));
let state = must(
  "getSubmission",
  await api.GET("/v1/projects/{projectId}/chats/{chatId}/submissions/{submissionId}", { params: { path: { ...chatPath, submissionId: running.submissionId } } }),
);
for (let tries = 0; state.replyMessageId === null && tries < 50; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  state = must(
    "getSubmission",
    await api.GET("/v1/projects/{projectId}/chats/{chatId}/submissions/{submissionId}", { params: { path: { ...chatPath, submissionId: running.submissionId } } }),
  );
}
if (!state.replyMessageId) throw new Error(`getSubmission: the running submission has no reply: ${JSON.stringify(state)}`);
const stopped = must(
  "stopMessage",
  await api.POST("/v1/projects/{projectId}/chats/{chatId}/messages/{messageId}/stop", { params: { path: { ...chatPath, messageId: state.replyMessageId } } }),
);
if (stopped.id !== state.replyMessageId || !["interrupted_by_user", "success"].includes(stopped.status ?? "")) throw new Error(`stopMessage: ${JSON.stringify(stopped)}`);
const reply = must("getMessage", await api.GET("/v1/projects/{projectId}/chats/{chatId}/messages/{messageId}", { params: { path: { ...chatPath, messageId: stopped.id } } }));
if (reply.id !== stopped.id || reply.status !== stopped.status) throw new Error(`getMessage: ${JSON.stringify(reply)}`);

// Errors arrive typed as the Problem schema.
const missing = await api.GET("/v1/projects/{projectId}/chats/{chatId}", { params: { path: { projectId, chatId: crypto.randomUUID() } } });
const problem: Problem | undefined = missing.error;
if (missing.response.status !== 404 || problem?.code !== "not_found" || !problem.instance.startsWith("urn:request:"))
  throw new Error(`getChat of an unknown chat: ${JSON.stringify(problem)}`);

console.log(
  `generated client: signed in, created a token and chat ${chat.id}, sent ${submission.submissionId} (${submission.disposition}), queue had ${queue.items.length}, history has ${history.items.length} messages; ` +
    `steered, stopped a reply (${stopped.status}, read back by id) and cancelled a queued submission (HTTP ${cancelled.response.status})`,
);
