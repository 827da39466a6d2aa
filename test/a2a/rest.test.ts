import { exports } from "cloudflare:workers";
import { describe, expect } from "vitest";
import { alarmOf, settle } from "../clock";
import { answerOf, call, expectProblem, newToken, room } from "../helpers";
import { it } from "../fixtures/chat";
import { agentPath, ORIGIN, userMessage } from "./a2a-helpers";

const V1 = { "a2a-version": "1.0" };
const rest = (token: string, projectId: string, method: string, path: string, body?: unknown, headers: Record<string, string> = V1) =>
  call(method, `${agentPath(projectId)}/rest${path}`, {
    token,
    headers: { ...(body === undefined ? {} : { "content-type": "application/a2a+json" }), ...headers },
    ...(body === undefined ? {} : { body }),
  });

describe("A2A over HTTP+JSON", () => {
  it("sends, reads, lists and cancels through the binding's routes, answering application/a2a+json", async ({ clock, w, chat }) => {
    const sent = await rest(w.token, w.projectId, "POST", "/message:send", {
      message: userMessage("over rest", { contextId: chat.id }),
      configuration: { returnImmediately: true },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.headers.get("content-type")).toBe("application/a2a+json");
    const id = sent.json.task.id;
    const queued = await rest(w.token, w.projectId, "POST", "/message:send", {
      message: userMessage("behind it", { contextId: chat.id }),
      configuration: { returnImmediately: true },
    });
    const cancelled = await rest(w.token, w.projectId, "POST", `/tasks/${queued.json.task.id}:cancel`);
    expect(cancelled.json.status.state).toBe("TASK_STATE_CANCELED");
    await settle(room(chat.id), clock);
    const read = await rest(w.token, w.projectId, "GET", `/tasks/${id}?historyLength=0`);
    expect(read.json).toMatchObject({ id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(read.json.history).toBeUndefined();
    const list = await rest(w.token, w.projectId, "GET", `/tasks?contextId=${chat.id}&pageSize=1&includeArtifacts=true`);
    expect(list.json).toMatchObject({ pageSize: 1, totalSize: 2 });
    expect(list.json.tasks[0].artifacts).toBeDefined();
    const card = await rest(w.token, w.projectId, "GET", "/extendedAgentCard");
    expect(card.json.name).toBe("test project");
  });

  it("answers errors as google.rpc.Status with the spec's HTTP status, and the /v1 code as a second detail", async ({ w, chat }) => {
    const missing = await rest(w.token, w.projectId, "GET", `/tasks/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      error: {
        code: 404,
        status: "NOT_FOUND",
        message: "Task not found",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }],
      },
    });
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    const archived = await rest(w.token, w.projectId, "POST", "/message:send", { message: userMessage("x", { contextId: chat.id }) });
    expect(archived.status).toBe(400);
    expect(archived.json.error.details.map((d: { reason: string }) => d.reason)).toEqual(["UNSUPPORTED_OPERATION", "CHAT_ARCHIVED"]);
    const bad = await rest(w.token, w.projectId, "GET", `/tasks?contextId=${chat.id}&pageSize=0`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.status).toBe("INVALID_ARGUMENT");
    const notJson = await call("POST", `${agentPath(w.projectId)}/rest/message:send`, { token: w.token, raw: "{", headers: { ...V1, "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expectProblem(
      await call("POST", `${agentPath(w.projectId)}/rest/message:send`, { token: w.token, raw: "{}", headers: { ...V1, "content-type": "text/plain" } }),
      415,
      "invalid_request",
    );
    const push = await rest(w.token, w.projectId, "GET", `/tasks/${crypto.randomUUID()}/pushNotificationConfigs`);
    expect(push.status).toBe(404);
    expect(push.json.error.details[0].reason).toBe("TASK_NOT_FOUND");
  });

  it("serves 1.0 only: without A2A-Version, with 0.3 or another, 400 VERSION_NOT_SUPPORTED", async ({ w }) => {
    for (const headers of [{}, { "a2a-version": "0.3" }, { "a2a-version": "2.0" }] as Record<string, string>[]) {
      const r = await rest(w.token, w.projectId, "GET", `/tasks/${crypto.randomUUID()}`, undefined, headers);
      expect(r.status).toBe(400);
      expect(r.json.error.details[0].reason).toBe("VERSION_NOT_SUPPORTED");
    }
  });

  it("a blocking send slower than its first second still answers application/a2a+json, echoing the extensions asked for", async ({ clock, w, chat }) => {
    const asked = { ...V1, "a2a-extensions": "urn:project-chat:a2a:usage:v1" };
    const pending = rest(w.token, w.projectId, "POST", "/message:send", { message: userMessage("slow", { contextId: chat.id }) }, asked);
    while ((await alarmOf(room(chat.id))) === null) await new Promise((resolve) => setTimeout(resolve, 5));
    // Past the moment an answer goes out as it is: the answer is committed (200) and kept alive until the task ends.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await settle(room(chat.id), clock);
    const answered = await pending;
    expect(answered.status).toBe(200);
    expect(answered.headers.get("content-type")).toBe("application/a2a+json");
    expect(answered.headers.get("a2a-extensions")).toBe("urn:project-chat:a2a:usage:v1");
    expect(answered.json.task.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("checks credentials first, then scope; other methods are 405 with Allow, unknown paths 404", async ({ w }) => {
    expectProblem(await rest("", w.projectId, "GET", "/tasks"), 401, "unauthorized");
    // Before the body's size too.
    const big = { message: userMessage("x".repeat(1_100_000)) };
    expectProblem(await rest("", w.projectId, "POST", "/message:send", big), 401, "unauthorized");
    expectProblem(await rest(w.token, w.projectId, "POST", "/message:send", big), 413, "payload_too_large");
    const reader = await newToken(w.session, ["chat:read"]);
    expectProblem(await rest(reader, w.projectId, "POST", "/message:send", { message: userMessage("x") }), 403, "insufficient_scope");
    const put = await rest(w.token, w.projectId, "PUT", `/tasks/${crypto.randomUUID()}`);
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET");
    expect((await rest(w.token, w.projectId, "GET", "/nothing")).status).toBe(404);
  });

  it("answers a stream refused before it began as an ordinary error, never a 500", async ({ w }) => {
    const unknown = await rest(w.token, w.projectId, "POST", `/tasks/${crypto.randomUUID()}:subscribe`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.status).toBe("NOT_FOUND");
    const bad = await rest(w.token, w.projectId, "POST", "/message:stream", { message: userMessage("x", { role: "ROLE_AGENT" }) });
    expect(bad.status).toBe(400);
  });

  it("streams StreamResponses themselves as events, with ids, and resumes with Last-Event-ID (GET and POST subscribe)", async ({ clock, w, chat }) => {
    const response = await exports.default.fetch(
      new Request(`${ORIGIN}${agentPath(w.projectId)}/rest/message:stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${w.token}`, "content-type": "application/a2a+json", ...V1 },
        body: JSON.stringify({ message: userMessage("stream over rest", { contextId: chat.id }) }),
      }),
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await settle(room(chat.id), clock);
    const text = await response.text();
    const frames = text.split("\n\n").filter((f) => f.includes("data: "));
    const first = JSON.parse(frames[0]!.split("data: ")[1]!);
    expect(first.task).toBeDefined();
    const last = JSON.parse(frames.at(-1)!.split("data: ")[1]!);
    expect(last.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    const firstId = /^id: (\d+)/m.exec(frames[0]!)![1]!;
    for (const method of ["GET", "POST"]) {
      const resumed = await answerOf(
        await exports.default.fetch(
          new Request(`${ORIGIN}${agentPath(w.projectId)}/rest/tasks/${first.task.id}:subscribe`, {
            method,
            headers: { authorization: `Bearer ${w.token}`, "last-event-id": firstId, ...V1 },
          }),
        ),
      );
      const replayed = resumed.text.split("\n\n").filter((f) => f.includes("data: "));
      expect(replayed.length).toBe(frames.length - 1);
    }
  });
});
