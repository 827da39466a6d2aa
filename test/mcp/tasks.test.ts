import { describe, expect } from "vitest";
import { answerKeyOf } from "../../src/mcp/elicitation";
import { chatNow, questionOf } from "../chats/question-helpers";
import { runNextAlarm, settle } from "../clock";
import { creditsOf, newToken, room, send } from "../helpers";
import { it } from "../fixtures/chat";
import { modernPost } from "./mcp-helpers";

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const FORM_AND_URL = { ...TASKS, elicitation: { form: {}, url: {} } };
const capabilities = (declared: Record<string, unknown>) => ({ "io.modelcontextprotocol/clientCapabilities": declared });

/** A tools/call of a client that declared the Tasks extension (and any elicitation modes). */
async function callAsTask(token: string, name: string, args: Record<string, unknown>, declared: Record<string, unknown> = TASKS) {
  const r = await modernPost(token, "tools/call", { name, arguments: args }, {}, capabilities(declared));
  expect(r.status, r.text).toBe(200);
  return r.json.result;
}
/** A tasks/* request naming its task in Mcp-Name, as the extension's client sends it. */
async function taskCall(token: string, method: string, taskId: string, extra: Record<string, unknown> = {}, declared: Record<string, unknown> = TASKS) {
  return modernPost(token, method, { taskId, ...extra }, { "mcp-name": taskId }, capabilities(declared));
}
async function taskGet(token: string, taskId: string, declared: Record<string, unknown> = TASKS) {
  const r = await taskCall(token, "tasks/get", taskId, {}, declared);
  expect(r.status, r.text).toBe(200);
  return r.json;
}

describe("MCP tasks (the Tasks extension, 2026-07-28)", () => {
  it("declares the extension as exactly {} in server/discover", async ({ w }) => {
    const r = await modernPost(w.token, "server/discover");
    expect(r.json.result.capabilities).toEqual({ tools: { listChanged: false }, extensions: { "io.modelcontextprotocol/tasks": {} } });
  });

  it("answers send_message with a task once the submission is stored, and reports the chain through to a result", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "hello", waitSeconds: 30 });
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 604800000, pollIntervalMs: 5000 });
    expect(created.taskId).toMatch(/^[A-Za-z0-9._~-]{1,1024}$/);
    // Opaque: no id of the project, chat or submission shows in the handle.
    expect(created.taskId).not.toContain(chat.id);
    expect((await taskGet(w.token, created.taskId)).result).toMatchObject({ resultType: "complete", status: "working" });
    await settle(room(chat.id), clock);
    const done = (await taskGet(w.token, created.taskId)).result;
    expect(done).toMatchObject({ status: "completed", result: { resultType: "complete", structuredContent: { answered: [], question: null, reply: { status: "success" } } } });
    expect(typeof done.createdAt).toBe("string");
    expect(typeof done.lastUpdatedAt).toBe("string");
  });

  it("shows a question as input_required, answers it once through tasks/update and goes on to the next reply", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "/choose Which theme? | Light | Dark" }, FORM_AND_URL);
    await settle(room(chat.id), clock);
    const asked = (await taskGet(w.token, created.taskId, FORM_AND_URL)).result;
    expect(asked.status).toBe("input_required");
    const [questionId] = Object.keys(asked.inputRequests);
    expect(asked.inputRequests[questionId!]).toEqual({
      method: "elicitation/create",
      params: {
        mode: "form",
        message: "Which theme?",
        requestedSchema: {
          type: "object",
          properties: {
            choice: {
              type: "string",
              title: "Choose",
              oneOf: [
                { const: "1", title: "Light" },
                { const: "2", title: "Dark" },
              ],
            },
          },
          required: ["choice"],
        },
      },
    });
    // A response that does not fit: -32602 with the problem, nothing applied.
    const unfit = await taskCall(w.token, "tasks/update", created.taskId, { inputResponses: { [questionId!]: { action: "accept", content: { choice: "9" } } } }, FORM_AND_URL);
    expect(unfit.json.error).toMatchObject({ code: -32602, data: { code: "answer_does_not_fit" } });
    expect((await questionOf(w, chat.id, questionId!)).status).toBe("pending");
    // Answered once, however often the update is repeated; an unknown key is ignored.
    const responses = { [questionId!]: { action: "accept", content: { choice: "2" } }, [crypto.randomUUID()]: { action: "decline" } };
    for (let i = 0; i < 2; i++) {
      const r = await taskCall(w.token, "tasks/update", created.taskId, { inputResponses: responses }, FORM_AND_URL);
      expect(r.json.result).toEqual({ resultType: "complete" });
    }
    const question = await questionOf(w, chat.id, questionId!);
    expect(question).toMatchObject({ status: "answered", answer: { optionIds: ["2"] } });
    await settle(room(chat.id), clock);
    const done = (await taskGet(w.token, created.taskId, FORM_AND_URL)).result;
    expect(done.status).toBe("completed");
    expect(done.result.structuredContent.answered).toEqual([{ questionId, submissionId: question.submissionId }]);
    expect(done.result.structuredContent.state.id).toBe(question.submissionId);
  });

  it("answers under the key derived from the question, so an answer through another channel first wins and the update changes nothing", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "/approve deploy" }, FORM_AND_URL);
    await settle(room(chat.id), clock);
    const { pendingQuestionId } = await chatNow(w, chat.id);
    const key = await answerKeyOf(pendingQuestionId!);
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const first = await send(w, chat.id, "no, wait");
    expect(first.status).toBe(202);
    const r = await taskCall(
      w.token,
      "tasks/update",
      created.taskId,
      { inputResponses: { [pendingQuestionId!]: { action: "accept", content: { decision: "approve" } } } },
      FORM_AND_URL,
    );
    expect(r.json.result).toEqual({ resultType: "complete" });
    expect((await questionOf(w, chat.id, pendingQuestionId!)).status).toBe("superseded");
  });

  it("shows a question the request cannot be asked as working, with how to answer it", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "/connect github" }, FORM_AND_URL);
    await settle(room(chat.id), clock);
    const formOnly = { ...TASKS, elicitation: { form: {} } };
    const seen = (await taskGet(w.token, created.taskId, formOnly)).result;
    expect(seen).toMatchObject({ status: "working" });
    expect(seen.statusMessage).toMatch(/^Waiting for an answer to question [0-9a-f-]{36}; answer it with answer_question$/);
    const asked = (await taskGet(w.token, created.taskId, FORM_AND_URL)).result;
    expect(Object.values(asked.inputRequests)[0]).toMatchObject({ params: { mode: "url", url: expect.stringMatching(/\/connections\/github$/) } });
  });

  it("ends a task created without elicitation at the question, complete, with the question in the result", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "/ask Your name?" });
    await settle(room(chat.id), clock);
    const done = (await taskGet(w.token, created.taskId)).result;
    expect(done).toMatchObject({ status: "completed", result: { structuredContent: { question: { kind: "text", status: "pending" }, answered: [] } } });
  });

  it("cancels in each state: a queued end, a working reply, a waiting question (withdrawn, nothing charged), an ended task (nothing)", async ({ clock, w, chat }) => {
    const ids = { projectId: w.projectId, chatId: chat.id };
    const running = await callAsTask(w.token, "send_message", { ...ids, content: "write a long answer" });
    const queued = await callAsTask(w.token, "send_message", { ...ids, content: "later" });
    expect((await taskCall(w.token, "tasks/cancel", queued.taskId)).json.result).toEqual({ resultType: "complete" });
    expect((await taskGet(w.token, queued.taskId)).result.status).toBe("cancelled");
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock);
    await taskCall(w.token, "tasks/cancel", running.taskId);
    expect((await taskGet(w.token, running.taskId)).result.status).toBe("cancelled");
    await settle(room(chat.id), clock);

    const asking = await callAsTask(w.token, "send_message", { ...ids, content: "/approve deploy" }, FORM_AND_URL);
    await settle(room(chat.id), clock);
    const credits = await creditsOf(w.account.id);
    const { pendingQuestionId } = await chatNow(w, chat.id);
    await taskCall(w.token, "tasks/cancel", asking.taskId, {}, FORM_AND_URL);
    expect(await questionOf(w, chat.id, pendingQuestionId!)).toMatchObject({ status: "declined", submissionId: null });
    expect((await taskGet(w.token, asking.taskId)).result.status).toBe("cancelled");
    await settle(room(chat.id), clock);
    expect(await creditsOf(w.account.id)).toBe(credits);

    const ended = await callAsTask(w.token, "send_message", { ...ids, content: "short" });
    await settle(room(chat.id), clock);
    expect((await taskCall(w.token, "tasks/cancel", ended.taskId)).json.result).toEqual({ resultType: "complete" });
    expect((await taskGet(w.token, ended.taskId)).result.status).toBe("completed");
  });

  it("answers a forged, foreign or unknown handle with the same Task not found, and refuses a request without the extension", async ({ clock, w, chat }) => {
    const created = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "hello" });
    const other = await newToken(w.session);
    const forged = `${created.taskId.slice(0, -4)}AAAA`;
    for (const [token, taskId] of [
      [other, created.taskId],
      [w.token, forged],
      [w.token, "v1.bm90LWEtaGFuZGxl"],
      [w.token, "anything"],
    ] as const) {
      const r = await taskCall(token, "tasks/get", taskId);
      expect(r.json.error, taskId).toEqual({ code: -32602, message: "Task not found" });
    }
    const undeclared = await taskCall(w.token, "tasks/get", created.taskId, {}, {});
    expect(undeclared.json.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } });
    // Past its ttlMs (seven days) a handle has expired.
    clock.advance(8 * 86_400_000);
    expect((await taskCall(w.token, "tasks/get", created.taskId)).json.error).toEqual({ code: -32602, message: "Task has expired" });
    // Mcp-Name must name the task the body names.
    const mismatch = await modernPost(w.token, "tasks/get", { taskId: created.taskId }, { "mcp-name": "another" }, capabilities(TASKS));
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.code).toBe(-32020);
  });

  it("acknowledges a subscriptions/listen asking for taskIds with none (task notifications are not sent), and ends it", async ({ w }) => {
    const r = await modernPost(w.token, "subscriptions/listen", { notifications: { taskIds: [crypto.randomUUID()], toolsListChanged: true } }, {}, capabilities(TASKS));
    expect(r.status).toBe(200);
    const messages = r.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)));
    expect(messages[0]).toMatchObject({ method: "notifications/subscriptions/acknowledged", params: { notifications: { taskIds: [], toolsListChanged: false } } });
    expect(messages.at(-1)).toMatchObject({ id: 1, result: { _meta: { "io.modelcontextprotocol/subscriptionId": 1 } } });
  });

  it("gives a replayed idempotencyKey a task for the first call's submission, whose result says replayed", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "hello", idempotencyKey: crypto.randomUUID() };
    const first = await callAsTask(w.token, "send_message", args);
    const again = await callAsTask(w.token, "send_message", args);
    await settle(room(chat.id), clock);
    const [one, two] = [(await taskGet(w.token, first.taskId)).result, (await taskGet(w.token, again.taskId)).result];
    expect(two.result.structuredContent.submission).toEqual(one.result.structuredContent.submission);
    expect(one.result.structuredContent.replayed).toBeUndefined();
    expect(two.result.structuredContent.replayed).toBe(true);
  });

  it("answers a /v1 problem as the same tool error, not a task, and never gives a task to a client that did not declare the extension", async ({ w, chat }) => {
    const problem = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: crypto.randomUUID(), content: "hello" });
    expect(problem).toMatchObject({ isError: true, resultType: "complete" });
    const plain = await callAsTask(w.token, "send_message", { projectId: w.projectId, chatId: chat.id, content: "hello" }, {});
    expect(plain.resultType).toBe("complete");
    expect(plain.structuredContent.submission.chatId).toBe(chat.id);
  });
});
