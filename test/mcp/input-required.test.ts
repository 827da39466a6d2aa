import { describe, expect } from "vitest";
import { chatNow, questionOf } from "../chats/question-helpers";
import { historyOf, newToken, send } from "../helpers";
import { it } from "../fixtures/chat";
import { flatAnswer, modernPost, whileWaiting } from "./mcp-helpers";

const FORM = { elicitation: { form: {} } };
const FORM_AND_URL = { elicitation: { form: {}, url: {} } };
const meta = (declared: Record<string, unknown>) => ({ "io.modelcontextprotocol/clientCapabilities": declared });

/** A 2026-07-28 tools/call from a client that declared elicitation, and its retry with a requestState and responses. */
function callTool(token: string, name: string, args: Record<string, unknown>, declared: Record<string, unknown> = FORM, extra: Record<string, unknown> = {}) {
  return modernPost(token, "tools/call", { name, arguments: args, ...extra }, {}, meta(declared));
}

describe("MRTR: questions as the client's own forms (2026-07-28)", () => {
  it("answers input_required at a question, takes the retry's response as the answer, never sends again, and goes on to the result", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/choose Which theme? | Light | Dark", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    expect(first.resultType).toBe("input_required");
    const [questionId] = Object.keys(first.inputRequests);
    expect(first.inputRequests[questionId!]).toMatchObject({ method: "elicitation/create", params: { mode: "form", message: "Which theme?" } });
    expect(first.requestState).toMatch(/^[A-Za-z0-9._~-]{1,1024}$/);

    // A response that does not fit: the same question again, with a fresh state.
    const unfit = (
      await callTool(w.token, "send_message", args, FORM, { requestState: first.requestState, inputResponses: { [questionId!]: { action: "accept", content: { choice: "7" } } } })
    ).json.result;
    expect(unfit).toMatchObject({ resultType: "input_required", inputRequests: { [questionId!]: { method: "elicitation/create" } } });
    expect(unfit.requestState).not.toBe(first.requestState);

    const retry = callTool(w.token, "send_message", args, FORM, {
      requestState: unfit.requestState,
      inputResponses: { [questionId!]: { action: "accept", content: { choice: "2" } } },
    });
    const done = (await whileWaiting(chat.id, clock, retry)).json.result;
    expect(done.resultType).toBe("complete");
    const question = await questionOf(w, chat.id, questionId!);
    expect(question).toMatchObject({ status: "answered", answer: { optionIds: ["2"] } });
    expect(done.structuredContent).toMatchObject({
      answered: [{ questionId, submissionId: question.submissionId }],
      state: { id: question.submissionId, status: "done" },
      question: null,
    });
    expect(done.structuredContent.reply.content).toContain("Dark");
    // One message sent, one answer: the retries sent nothing.
    const users = (await historyOf(w, chat.id)).items.filter((m: { role: string }) => m.role === "user");
    expect(users.map((m: { content: string }) => m.content)).toEqual(["Dark", "/choose Which theme? | Light | Dark"]);

    // A used state replayed answers nothing twice: it reports the chain as it stands.
    const replayed = (
      await callTool(w.token, "send_message", args, FORM, { requestState: first.requestState, inputResponses: { [questionId!]: { action: "accept", content: { choice: "1" } } } })
    ).json.result;
    expect(replayed.structuredContent.state.id).toBe(question.submissionId);
    expect((await questionOf(w, chat.id, questionId!)).answer).toEqual({ optionIds: ["2"] });
  });

  it("stops asking when the person dismisses the form (cancel): the question stays pending in the result", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/approve deploy", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    const [questionId] = Object.keys(first.inputRequests);
    expect(first.inputRequests[questionId!].params.message).toBe("May I: deploy?\n\nAction: demo_action: deploy");
    const cancelled = (await callTool(w.token, "send_message", args, FORM, { requestState: first.requestState, inputResponses: { [questionId!]: { action: "cancel" } } })).json
      .result;
    expect(cancelled).toMatchObject({ resultType: "complete", structuredContent: { question: { id: questionId, status: "pending" }, answered: [] } });
    expect((await chatNow(w, chat.id)).pendingQuestionId).toBe(questionId);
  });

  it("ends the view at a question the client cannot be asked, with the question in the result", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/connect github", waitSeconds: 30 };
    const formOnly = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    expect(formOnly).toMatchObject({ resultType: "complete", structuredContent: { question: { kind: "connection", status: "pending" } } });
  });

  it("asks a connection in url mode, and a decline declines it", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/connect github", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args, FORM_AND_URL))).json.result;
    const [questionId] = Object.keys(first.inputRequests);
    const params = first.inputRequests[questionId!].params;
    expect(params).toMatchObject({ mode: "url", url: expect.stringMatching(/\/connections\/github$/) });
    // The key names the question on 2026-07-28; elicitationId is 2025-11-25's.
    expect(params).not.toHaveProperty("elicitationId");
    const retry = callTool(w.token, "send_message", args, FORM_AND_URL, { requestState: first.requestState, inputResponses: { [questionId!]: { action: "decline" } } });
    await whileWaiting(chat.id, clock, retry);
    expect(await questionOf(w, chat.id, questionId!)).toMatchObject({ status: "declined", answer: { decline: true } });
  });

  it("refuses a forged, foreign, other-arguments, other-tool or expired requestState with -32602, and sends nothing", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    const [questionId] = Object.keys(first.inputRequests);
    const responses = { inputResponses: { [questionId!]: { action: "accept", content: { text: "Ada" } } } };
    const invalid = { code: -32602, data: { reason: "request_state_invalid" } };
    const other = await newToken(w.session);
    expect((await callTool(w.token, "send_message", args, FORM, { requestState: "v1.forged", ...responses })).json.error).toMatchObject(invalid);
    expect((await callTool(other, "send_message", args, FORM, { requestState: first.requestState, ...responses })).json.error).toMatchObject(invalid);
    expect((await callTool(w.token, "send_message", { ...args, content: "other" }, FORM, { requestState: first.requestState, ...responses })).json.error).toMatchObject(invalid);
    const answerArgs = { projectId: w.projectId, chatId: chat.id, questionId, answer: flatAnswer({ text: "Ada" }), waitSeconds: 30 };
    expect((await callTool(w.token, "answer_question", answerArgs, FORM, { requestState: first.requestState, ...responses })).json.error).toMatchObject(invalid);
    clock.advance(3_600_001);
    expect((await callTool(w.token, "send_message", args, FORM, { requestState: first.requestState, ...responses })).json.error).toMatchObject({
      code: -32602,
      data: { reason: "request_state_expired" },
    });
    expect((await questionOf(w, chat.id, questionId!)).status).toBe("pending");
    expect((await historyOf(w, chat.id)).items.filter((m: { role: string }) => m.role === "user")).toHaveLength(1);
  });

  it("refuses a requestState on a call that now declares the Tasks extension, sending nothing", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    const [questionId] = Object.keys(first.inputRequests);
    const withTasks = { ...FORM, extensions: { "io.modelcontextprotocol/tasks": {} } };
    const r = await callTool(w.token, "send_message", args, withTasks, {
      requestState: first.requestState,
      inputResponses: { [questionId!]: { action: "accept", content: { text: "Ada" } } },
    });
    expect(r.json.error).toMatchObject({ code: -32602, data: { reason: "request_state_invalid" } });
    expect((await historyOf(w, chat.id)).items.filter((m: { role: string }) => m.role === "user")).toHaveLength(1);
    expect((await questionOf(w, chat.id, questionId!)).status).toBe("pending");
  });

  it("answers as today to a client that declared no elicitation (plus answered: [])", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 30 };
    const plain = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args, {}))).json.result;
    expect(plain).toMatchObject({ resultType: "complete", structuredContent: { answered: [], question: { kind: "text", status: "pending" } } });
  });

  it("goes on with the chain when another channel answered first, without answering twice", async ({ clock, w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 30 };
    const first = (await whileWaiting(chat.id, clock, callTool(w.token, "send_message", args))).json.result;
    const [questionId] = Object.keys(first.inputRequests);
    expect((await send(w, chat.id, "Grace")).status).toBe(202);
    const retry = callTool(w.token, "send_message", args, FORM, {
      requestState: first.requestState,
      inputResponses: { [questionId!]: { action: "accept", content: { text: "Ada" } } },
    });
    const done = (await whileWaiting(chat.id, clock, retry)).json.result;
    expect((await questionOf(w, chat.id, questionId!)).answer).toEqual({ text: "Grace" });
    expect(done.structuredContent.answered).toHaveLength(1);
  });
});
