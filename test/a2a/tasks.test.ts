import { describe, expect } from "vitest";
import { alarmOf, settle } from "../clock";
import { admin, call, creditsOf, newAccount, newChat, newToken, room, signIn, world } from "../helpers";
import { it } from "../fixtures/chat";
import { errorOf, legacyRpc, reasonsOf, resultOf, rpc, userMessage } from "./a2a-helpers";

/** Until the chat's object has work scheduled (a submission stored), so a test can step it while a call waits. */
async function untilScheduled(chatId: string) {
  for (let i = 0; i < 400; i++) {
    if ((await alarmOf(room(chatId))) !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("nothing was scheduled");
}

const at = (text: string, chatId: string, extra: Record<string, unknown> = {}) => userMessage(text, { contextId: chatId, ...extra });
const immediately = { returnImmediately: true };

describe("A2A tasks over JSON-RPC 1.0", () => {
  it("SendMessage without contextId makes a chat titled by the message's first line, and answers SUBMITTED or WORKING at once when asked to", async ({ w }) => {
    const sent = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("  Plan   the launch\nwith details"), configuration: immediately }));
    const task = sent.task;
    expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(task.status.state);
    const chat = await call("GET", `/v1/projects/${w.projectId}/chats/${task.contextId}`, { token: w.token });
    expect(chat.json.title).toBe("Plan the launch");
    // The task is the chat's submission, as /v1 sees it.
    const submission = await call("GET", `/v1/projects/${w.projectId}/chats/${task.contextId}/submissions/${task.id}`, { token: w.token });
    expect(submission.status, submission.text).toBe(200);
  });

  it("a blocking SendMessage answers when the task ends: the reply as an artifact, the history, the usage", async ({ clock, w, chat }) => {
    const pending = rpc(w.token, w.projectId, "SendMessage", { message: at("hello", chat.id) });
    await untilScheduled(chat.id);
    await settle(room(chat.id), clock);
    const { task } = await resultOf(pending);
    expect(task).toMatchObject({ contextId: chat.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]).toMatchObject({ name: "reply", parts: [{ text: expect.stringContaining("hello") }] });
    // The user's message as it was sent, its messageId included.
    expect(task.history).toEqual([expect.objectContaining({ role: "ROLE_USER", parts: [{ text: "hello" }], contextId: chat.id })]);
    expect(task.history[0].messageId).toMatch(/^msg-/);
    expect(task.metadata["urn:project-chat:a2a:usage:v1"]).toEqual({ credits: 1, inputTokens: null, outputTokens: null, failure: null });
    expect(Date.parse(task.status.timestamp)).toBeGreaterThan(0);
  });

  it("GetTask reads the task with historyLength, and refuses a negative one", async ({ clock, w, chat }) => {
    const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: at("hello", chat.id), configuration: immediately }));
    await settle(room(chat.id), clock);
    const read = await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }));
    expect(read.status.state).toBe("TASK_STATE_COMPLETED");
    expect(read.history).toHaveLength(1);
    expect((await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id, historyLength: 0 }))).history).toBeUndefined();
    expect((await errorOf(rpc(w.token, w.projectId, "GetTask", { id: task.id, historyLength: -1 }))).code).toBe(-32602);
  });

  it("not found is one answer: a made-up task, a task of a foreign project, and a project the caller is not in", async ({ w, chat }) => {
    const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: at("hello", chat.id), configuration: immediately }));
    const other = await world();
    const madeUp = await rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() });
    const foreign = await rpc(other.token, other.projectId, "GetTask", { id: task.id });
    const notMine = await rpc(other.token, w.projectId, "GetTask", { id: task.id });
    const nonsense = await rpc(w.token, w.projectId, "GetTask", { id: "not-a-task" });
    for (const r of [madeUp, foreign, notMine, nonsense]) {
      expect(r.status).toBe(200);
      expect(JSON.stringify({ ...r.json, id: 0 })).toBe(JSON.stringify({ ...madeUp.json, id: 0 }));
    }
    expect(madeUp.json.error).toEqual({
      code: -32001,
      message: "Task not found",
      data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }],
    });
    // The same for a chat of a project the caller cannot reach.
    expect((await errorOf(rpc(other.token, w.projectId, "SendMessage", { message: at("x", chat.id) }))).code).toBe(-32001);
  });

  it("the same messageId is the same task, also when retries run at once; another body under it is IDEMPOTENCY_KEY_REUSED", async ({ w, chat }) => {
    const message = at("once only", chat.id);
    const answers = await Promise.all([0, 1, 2].map(() => resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }))));
    expect(new Set(answers.map((a) => a.task.id)).size).toBe(1);
    const queue = await call("GET", `/v1/projects/${w.projectId}/chats/${chat.id}/messages`, { token: w.token });
    expect(queue.json.items.filter((m: { role: string }) => m.role === "user").length).toBeLessThanOrEqual(1);
    const changed = await errorOf(rpc(w.token, w.projectId, "SendMessage", { message: { ...message, parts: [{ text: "something else" }] } }));
    expect(changed.code).toBe(-32602);
    expect(reasonsOf(changed)).toEqual(["INVALID_PARAMS", "IDEMPOTENCY_KEY_REUSED"]);
    // Without contextId it is another message too.
    const moved = await errorOf(rpc(w.token, w.projectId, "SendMessage", { message: { ...message, contextId: undefined } }));
    expect(reasonsOf(moved)).toContain("IDEMPOTENCY_KEY_REUSED");
  });

  it("keeps messageIds per sending account: two members' same messageId are two tasks", async ({ w, chat }) => {
    const member = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${member.id}`, { role: "editor" })).status).toBe(200);
    const token = await newToken(await signIn(member));
    const message = at("same id", chat.id);
    const mine = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }));
    const theirs = await resultOf(rpc(token, w.projectId, "SendMessage", { message, configuration: immediately }));
    expect(theirs.task.id).not.toBe(mine.task.id);
  });

  it("refuses a message that is not the user's, has no parts, carries a file, or wants no text back", async ({ w, chat }) => {
    const send = (message: Record<string, unknown>, configuration: Record<string, unknown> = {}) => errorOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration }));
    expect((await send({ ...at("x", chat.id), role: "ROLE_AGENT" })).code).toBe(-32602);
    expect((await send({ ...at("x", chat.id), parts: [] })).code).toBe(-32602);
    expect((await send({ ...at("x", chat.id), messageId: "m".repeat(129) })).code).toBe(-32602);
    expect((await send({ ...at("x", chat.id), parts: [{ url: "https://files.example/a.png", mediaType: "image/png" }] })).code).toBe(-32005);
    expect((await send({ ...at("x", chat.id), parts: [{ data: { a: 1 } }] })).code).toBe(-32005);
    expect((await send(at("x", chat.id), { acceptedOutputModes: ["image/png"] })).code).toBe(-32005);
    expect((await send({ ...at("", chat.id) })).code).toBe(-32602);
    // text/* takes text.
    expect(
      (await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: at("ok", chat.id), configuration: { acceptedOutputModes: ["text/*"], returnImmediately: true } }))).task,
    ).toBeDefined();
  });

  it("an archived chat is UnsupportedOperation with CHAT_ARCHIVED", async ({ w, chat }) => {
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    const archived = await errorOf(rpc(w.token, w.projectId, "SendMessage", { message: at("x", chat.id) }));
    expect(archived.code).toBe(-32004);
    expect(reasonsOf(archived)).toEqual(["UNSUPPORTED_OPERATION", "CHAT_ARCHIVED"]);
  });

  it("a messageId whose send was refused is free for another message; a write-only token may wait on its own task", async ({ clock, w, chat }) => {
    const messageId = crypto.randomUUID();
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    const refused = await errorOf(rpc(w.token, w.projectId, "SendMessage", { message: { ...at("first try", chat.id), messageId } }));
    expect(reasonsOf(refused)).toContain("CHAT_ARCHIVED");
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/restore`, { token: w.token })).status).toBe(200);
    const writer = await newToken(w.session, ["chat:write"]);
    const pending = rpc(writer, w.projectId, "SendMessage", { message: { ...at("a corrected text", chat.id), messageId } });
    await untilScheduled(chat.id);
    await settle(room(chat.id), clock);
    const { task } = await resultOf(pending);
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("a message refused once is sent by its retry once the refusal no longer holds, as the same task id", async ({ w, chat }) => {
    const message = at("try again", chat.id);
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expect(reasonsOf(await errorOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately })))).toContain("CHAT_ARCHIVED");
    expect((await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/restore`, { token: w.token })).status).toBe(200);
    const first = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }));
    const again = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }));
    expect(again.task.id).toBe(first.task.id);
    expect((await resultOf(rpc(w.token, w.projectId, "GetTask", { id: first.task.id }))).contextId).toBe(chat.id);
  });

  it("a task that could not start for want of credits is REJECTED, with the failure in its usage", async ({ clock }) => {
    const w = await world({ credits: 0 });
    const chat = await newChat(w);
    const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: at("hello", chat.id), configuration: immediately }));
    await settle(room(chat.id), clock);
    const read = await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }));
    expect(read.status.state).toBe("TASK_STATE_REJECTED");
    expect(read.status.message.parts[0].text).toMatch(/credit/i);
    expect(read.metadata["urn:project-chat:a2a:usage:v1"].failure.code).toBe("insufficient_credits");
  });

  it("a viewer may read but not send: 403 forbidden at the HTTP level", async ({ w, chat }) => {
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    const token = await newToken(await signIn(viewer));
    const refused = await rpc(token, w.projectId, "SendMessage", { message: at("x", chat.id) });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("forbidden");
    expect((await resultOf(rpc(token, w.projectId, "ListTasks", { contextId: chat.id }))).tasks).toEqual([]);
  });

  it("speaks v0.3 without A2A-Version: message/send and tasks/get over the same chats", async ({ clock, w, chat }) => {
    const sent = await resultOf(
      legacyRpc(w.token, w.projectId, "message/send", {
        message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "hello" }], contextId: chat.id },
        configuration: { blocking: false },
      }),
    );
    expect(sent.kind).toBe("task");
    await settle(room(chat.id), clock);
    const read = await resultOf(legacyRpc(w.token, w.projectId, "tasks/get", { id: sent.id }));
    expect(read).toMatchObject({ kind: "task", id: sent.id, contextId: chat.id, status: { state: "completed" } });
    // v0.3 has no ListTasks.
    expect((await errorOf(legacyRpc(w.token, w.projectId, "ListTasks", { contextId: chat.id }))).code).toBe(-32601);
  });

  it("charges a task once, whichever way it is asked after", async ({ clock, w, chat }) => {
    const before = await creditsOf(w.account.id);
    const message = at("charge me once", chat.id);
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }));
    await settle(room(chat.id), clock);
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }));
    await settle(room(chat.id), clock);
    expect(await creditsOf(w.account.id)).toBe(before - 1);
  });
});
