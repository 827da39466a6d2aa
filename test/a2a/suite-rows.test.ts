import { describe, expect } from "vitest";
import { call, expectProblem } from "../helpers";
import { it } from "../fixtures/chat";
import { agentPath, errorOf, resultOf, rpc, userMessage } from "./a2a-helpers";

// What the A2A TCK and the community clients found, as the contract's changed rows fix it.
const RECEIVER = "https://receiver.example.com/a2a";
const V1 = { "a2a-version": "1.0" };

describe("A2A, as its TCK and the clients people use check it", () => {
  it("refuses a task or context id that is not a string with -32602 naming it, never Task not found", async ({ w, chat }) => {
    for (const [method, params, field] of [
      ["GetTask", { id: 42 }, "id"],
      ["CancelTask", { id: { not: "a string" } }, "id"],
      ["CreateTaskPushNotificationConfig", { taskId: [1], url: RECEIVER }, "taskId"],
      ["SendMessage", { message: { ...userMessage("hello"), contextId: 7 } }, "message.contextId"],
      ["SendMessage", { message: { ...userMessage("hello", { contextId: chat.id }), taskId: 7 } }, "message.taskId"],
    ] as const) {
      const error = await errorOf(rpc(w.token, w.projectId, method, params));
      expect(error.code, `${method} ${field}`).toBe(-32602);
      expect(error.message, `${method} ${field}`).toMatch(new RegExp(`^${field.replace(".", "\\.")} `));
    }
    // null is absent (ProtoJSON): a send with a null contextId makes a chat as one without.
    const made = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: { ...userMessage("null is absent"), contextId: null }, configuration: { returnImmediately: true } }),
    );
    expect(made.task.contextId).toEqual(expect.any(String));
  });

  it("takes a push token and credentials only in characters a header carries as they are", async ({ w, chat }) => {
    const { task: sent } = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: userMessage("push me", { contextId: chat.id }), configuration: { returnImmediately: true } }),
    );
    const push = (config: Record<string, unknown>) => errorOf(rpc(w.token, w.projectId, "CreateTaskPushNotificationConfig", { taskId: sent.id, url: RECEIVER, ...config }));
    for (const [config, field] of [
      [{ token: "tøken-with-a-letter-no-header-carries" }, "token"],
      [{ token: "a token with spaces in it" }, "token"],
      [{ token: "line\r\nbreak-0123456789" }, "token"],
      [{ authentication: { scheme: "Bearer", credentials: "nul\u0000inside" } }, "authentication.credentials"],
      [{ authentication: { scheme: "Bearer", credentials: "ünïcode" } }, "authentication.credentials"],
    ] as const) {
      const error = await push(config);
      expect(error.code, JSON.stringify(config)).toBe(-32602);
      expect(error.message.startsWith(field), error.message).toBe(true);
    }
    const kept = await resultOf(
      rpc(w.token, w.projectId, "CreateTaskPushNotificationConfig", {
        taskId: sent.id,
        url: RECEIVER,
        token: "visible-ascii-token!~",
        authentication: { scheme: "Basic", credentials: "dXNlcjpwYXNz with space" },
      }),
    );
    expect(kept.token ?? "").toBe("");
    expect(kept.authentication.scheme).toBe("Basic");
  });

  it("lists without a status filter when the status is left out as UNRECOGNIZED, as the JS SDK's client sends it", async ({ w, chat }) => {
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("list me", { contextId: chat.id }), configuration: { returnImmediately: true } }));
    const listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, status: "UNRECOGNIZED" }));
    expect(listed.tasks).toHaveLength(1);
  });

  it("answers a body that is not JSON 415 on both bindings, and ContentTypeNotSupported 415 on HTTP+JSON", async ({ w, chat }) => {
    const jsonRpc = await call("POST", agentPath(w.projectId), { token: w.token, raw: "{}", headers: { "content-type": "text/plain", ...V1 } });
    expectProblem(jsonRpc, 415, "invalid_request");
    const rest = await call("POST", `${agentPath(w.projectId)}/rest/message:send`, { token: w.token, raw: "{}", headers: { "content-type": "text/plain", ...V1 } });
    expectProblem(rest, 415, "invalid_request");
    const file = await call("POST", `${agentPath(w.projectId)}/rest/message:send`, {
      token: w.token,
      headers: { "content-type": "application/a2a+json", ...V1 },
      body: { message: { ...userMessage("x", { contextId: chat.id }), parts: [{ url: "https://files.example/a.png", mediaType: "image/png" }] } },
    });
    expect(file.status).toBe(415);
    expect(file.json.error).toMatchObject({ code: 415, details: [expect.objectContaining({ reason: "CONTENT_TYPE_NOT_SUPPORTED" })] });
  });
});
