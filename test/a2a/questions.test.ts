import { describe, expect } from "vitest";
import { settle } from "../clock";
import { call, creditsOf, room } from "../helpers";
import { it } from "../fixtures/chat";
import { errorOf, reasonsOf, resultOf, rpc, userMessage } from "./a2a-helpers";

const immediately = { returnImmediately: true };

describe("A2A questions, cancel and lists", () => {
  /** A task whose reply asked the question a demo command makes, as it stands once asked. */
  async function asking(w: { token: string; projectId: string }, chatId: string, clock: Parameters<typeof settle>[1], command: string) {
    const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage(command, { contextId: chatId }), configuration: immediately }));
    await settle(room(chatId), clock);
    return resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }));
  }
  const answer = (w: { token: string; projectId: string }, taskId: string, parts: unknown[]) =>
    rpc(w.token, w.projectId, "SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId, parts }, configuration: immediately });

  it("a choice is INPUT_REQUIRED with the prompt and options as text and the Question as a data part, also last in history", async ({ clock, w, chat }) => {
    const task = await asking(w, chat.id, clock, "/choose Which theme? | Light | Dark");
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const message = task.status.message;
    expect(message).toMatchObject({ role: "ROLE_AGENT", contextId: chat.id, taskId: task.id, extensions: ["urn:project-chat:a2a:question:v1"] });
    expect(message.parts[0].text).toBe("Which theme?\n1. Light\n2. Dark");
    expect(message.parts[1]).toMatchObject({ mediaType: "application/json", data: { kind: "choice", status: "pending", prompt: "Which theme?" } });
    expect(message.parts[1].metadata["urn:project-chat:a2a:question:v1"].questionId).toBe(message.messageId);
    expect(task.history.at(-1)).toEqual(message);
  });

  it("answers by label (any case) or id with the same taskId, and the same task goes on to its next end", async ({ clock, w, chat }) => {
    const task = await asking(w, chat.id, clock, "/choose Which theme? | Light | Dark");
    const unfit = await errorOf(answer(w, task.id, [{ text: "purple" }]));
    expect(unfit.code).toBe(-32602);
    expect(reasonsOf(unfit)).toEqual(["INVALID_PARAMS", "ANSWER_DOES_NOT_FIT"]);
    expect(unfit.message).toContain("Light, Dark");
    const answered = await resultOf(answer(w, task.id, [{ text: "dark" }]));
    expect(answered.task.id).toBe(task.id);
    expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(answered.task.status.state);
    await settle(room(chat.id), clock);
    const done = await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }));
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts).toHaveLength(2);
    const question = await call("GET", `/v1/projects/${w.projectId}/chats/${chat.id}/questions/${task.status.message.messageId}`, { token: w.token });
    expect(question.json).toMatchObject({ status: "answered", answer: { optionIds: ["2"] } });
    // The answer's submission is the task's, not a task of its own.
    const answerSubmission = question.json.submissionId;
    expect((await errorOf(rpc(w.token, w.projectId, "GetTask", { id: answerSubmission }))).code).toBe(-32001);
  });

  it("takes an approval in words and a data part in the /v1 answer shape; a connection is AUTH_REQUIRED", async ({ clock, w, chat }) => {
    const approval = await asking(w, chat.id, clock, "/approve deploy");
    expect(approval.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect((await errorOf(answer(w, approval.id, [{ text: "maybe" }]))).message).toMatch(/approve or deny/);
    await resultOf(answer(w, approval.id, [{ text: "Yes!" }]));
    await settle(room(chat.id), clock);
    const connection = await asking(w, chat.id, clock, "/connect GitHub");
    expect(connection.status.state).toBe("TASK_STATE_AUTH_REQUIRED");
    await resultOf(answer(w, connection.id, [{ data: { connected: true } }]));
    const badData = await asking(w, chat.id, clock, "/approve again");
    expect((await errorOf(answer(w, badData.id, [{ data: { decision: "perhaps" } }]))).code).toBe(-32602);
  });

  it("a message to a task that has ended, or has not started, is UnsupportedOperation", async ({ clock, w, chat }) => {
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("busy", { contextId: chat.id }), configuration: immediately }));
    const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("hello", { contextId: chat.id }), configuration: immediately }));
    expect(task.status.state).toBe("TASK_STATE_SUBMITTED");
    const early = await errorOf(answer(w, task.id, [{ text: "more" }]));
    expect(early.code).toBe(-32004);
    await settle(room(chat.id), clock);
    expect((await errorOf(answer(w, task.id, [{ text: "more" }]))).code).toBe(-32004);
    // contextId and taskId must agree.
    const other = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("elsewhere"), configuration: immediately }));
    const mismatch = await errorOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("x", { taskId: task.id, contextId: other.task.contextId }) }));
    expect(mismatch.code).toBe(-32602);
  });

  it("CancelTask withdraws a question: CANCELED, the question declined with no submission, nothing charged", async ({ clock, w, chat }) => {
    const task = await asking(w, chat.id, clock, "/ask Your name?");
    const before = await creditsOf(w.account.id);
    const cancelled = await resultOf(rpc(w.token, w.projectId, "CancelTask", { id: task.id }));
    expect(cancelled.status.state).toBe("TASK_STATE_CANCELED");
    const question = await call("GET", `/v1/projects/${w.projectId}/chats/${chat.id}/questions/${task.status.message.messageId}`, { token: w.token });
    expect(question.json).toMatchObject({ status: "declined", submissionId: null });
    await settle(room(chat.id), clock);
    expect(await creditsOf(w.account.id)).toBe(before);
    // Again: the task as it stands.
    expect((await resultOf(rpc(w.token, w.projectId, "CancelTask", { id: task.id }))).status.state).toBe("TASK_STATE_CANCELED");
  });

  it("CancelTask on a queued task: it never runs and is never charged; on a working one its reply stops; an ended one is not cancelable", async ({ clock, w, chat }) => {
    const first = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("first", { contextId: chat.id }), configuration: immediately }));
    const second = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("second", { contextId: chat.id }), configuration: immediately }));
    expect(second.task.status.state).toBe("TASK_STATE_SUBMITTED");
    const before = await creditsOf(w.account.id);
    expect((await resultOf(rpc(w.token, w.projectId, "CancelTask", { id: second.task.id }))).status.state).toBe("TASK_STATE_CANCELED");
    // Still being dispatched: the call waits for its reply to exist, and stops it then.
    const stopping = rpc(w.token, w.projectId, "CancelTask", { id: first.task.id });
    await settle(room(chat.id), clock);
    const working = await resultOf(stopping);
    expect(working.status.state).toBe("TASK_STATE_CANCELED");
    expect(await creditsOf(w.account.id)).toBeGreaterThanOrEqual(before - 1);
    const ended = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("third", { contextId: chat.id }), configuration: immediately }));
    await settle(room(chat.id), clock);
    const refused = await errorOf(rpc(w.token, w.projectId, "CancelTask", { id: ended.task.id }));
    expect(refused.code).toBe(-32002);
  });

  it("ListTasks: a chat's tasks newest first, by state, in pages; another chat an empty page", async ({ clock, w, chat }) => {
    const ids: string[] = [];
    const sent: string[] = [];
    for (const text of ["one", "two", "three"]) {
      const message = userMessage(text, { contextId: chat.id });
      sent.push(message.messageId);
      ids.push((await resultOf(rpc(w.token, w.projectId, "SendMessage", { message, configuration: immediately }))).task.id);
      await settle(room(chat.id), clock);
      clock.advance(1000);
    }
    const page1 = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageSize: 2 }));
    expect(page1.tasks.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    expect(page1).toMatchObject({ pageSize: 2, totalSize: 3 });
    expect(page1.tasks[0].artifacts).toBeUndefined();
    expect(page1.tasks[0].history).toBeUndefined();
    const page2 = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageSize: 2, pageToken: page1.nextPageToken }));
    expect(page2.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect(page2.nextPageToken).toBe("");
    const full = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, includeArtifacts: true, historyLength: 5 }));
    expect(full.tasks[0].artifacts).toHaveLength(1);
    expect(full.tasks[0].history).toHaveLength(1);
    // The history shows each message as A2A sent it, its messageId included.
    expect(full.tasks.map((t: { history: { messageId: string }[] }) => t.history[0]!.messageId)).toEqual([sent[2], sent[1], sent[0]]);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, status: "TASK_STATE_WORKING" }))).tasks).toEqual([]);
    expect((await errorOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageSize: 101 }))).code).toBe(-32602);
    expect((await errorOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageToken: "nope" }))).code).toBe(-32602);
    for (const time of ["yesterday", "2026-11-01", "Sun, 01 Nov 2026 00:00:00 GMT"]) {
      expect((await errorOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, statusTimestampAfter: time }))).code, time).toBe(-32602);
    }
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, statusTimestampAfter: "2000-01-01T00:00:00+01:00" }))).totalSize).toBe(3);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: crypto.randomUUID() }))).tasks).toEqual([]);
  });

  it("every root submission is a task whichever channel sent it; a steering text a task took is not", async ({ clock, w, chat }) => {
    const sent = await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/messages`, {
      token: w.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { content: "from /v1" },
    });
    expect(sent.status).toBe(202);
    const steer = await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/steer`, {
      token: w.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { content: "and steer" },
    });
    expect(steer.status).toBe(202);
    await settle(room(chat.id), clock);
    const list = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id }));
    expect(list.tasks.map((t: { id: string }) => t.id)).toEqual([sent.json.submissionId]);
    // The chat list learns which chat it is in with the chat's next summary, so GetTask finds it by its id alone.
    expect((await resultOf(rpc(w.token, w.projectId, "GetTask", { id: sent.json.submissionId }))).contextId).toBe(chat.id);
    expect((await errorOf(rpc(w.token, w.projectId, "GetTask", { id: steer.json.submissionId }))).code).toBe(-32001);
  });
});
