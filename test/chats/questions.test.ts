import { describe, expect } from "vitest";
import { demoQuestion, localReply } from "../../src/agent/local";
import { Question } from "../../src/chats/question-schemas";
import { runNextAlarm, settle } from "../clock";
import { chatsPath, historyOf, peek, queueOf, room, send } from "../helpers";
import { openEvents } from "../sse";
import { outboxOf, recordingEvents } from "../webhooks/webhook-helpers";
import { steer, submissionOf, workingReply } from "./control-helpers";
import { answer, ask, chatNow, questionOf } from "./question-helpers";
import { it } from "../fixtures/chat";

const HOUR = 3_600_000;

/** The webhook payloads of the chat's outbox events of one type, oldest first. */
async function outboxPayloads(chatId: string, type: string) {
  const rows = (await outboxOf(chatId)).filter((e) => e.type === type);
  return Promise.all(rows.map(async (e) => JSON.parse((await room(chatId).webhookPayload(e.id))!)));
}
const APP = "http://localhost:5173";

describe("questions the built-in agent asks", () => {
  it("asks a text question with /ask: the reply is its prompt, the chat awaits it, the history names it", async ({ clock, w, chat }) => {
    const { question: q, submissionId } = await ask(w, chat.id, clock, "/ask What should the page be called?");
    const reply = (await peek(w, chat.id)).find((m) => m.role === "owner")!;
    expect(reply).toMatchObject({ status: "success", content: "What should the page be called?", questionId: q.id, submissionId });
    expect(q).toEqual({
      id: q.id,
      chatId: chat.id,
      taskId: reply.taskId,
      messageId: reply.id,
      kind: "text",
      status: "pending",
      prompt: "What should the page be called?",
      options: null,
      multiSelect: false,
      allowText: true,
      action: null,
      url: null,
      createdAt: q.createdAt,
      expiresAt: new Date(Date.parse(q.createdAt) + 168 * HOUR).toISOString(),
      closedAt: null,
      answer: null,
      submissionId: null,
    });
    expect(await chatNow(w, chat.id)).toMatchObject({ isAwaitingUser: true, pendingQuestionId: q.id, isWorking: false });
    expect((await historyOf(w, chat.id)).items.find((m) => m.role === "user")!.questionId).toBeNull();
    // The chat list shows it too.
    const listed = (await (await import("../helpers")).call("GET", chatsPath(w), { token: w.token })).json.items;
    expect(listed.find((c: { id: string }) => c.id === chat.id)).toMatchObject({ isAwaitingUser: true, pendingQuestionId: q.id });
  });

  it("asks a choice with /choose (one pick) and /choose+ (several), options 1, 2, … in order", async ({ clock, w, chat }) => {
    const one = (await ask(w, chat.id, clock, "/choose Pick a color |  Red | | Green |Blue ")).question;
    expect(one).toMatchObject({ kind: "choice", prompt: "Pick a color", multiSelect: false, allowText: false, action: null, url: null });
    expect(one.options).toEqual([
      { id: "1", label: "Red", description: null },
      { id: "2", label: "Green", description: null },
      { id: "3", label: "Blue", description: null },
    ]);
    expect((await answer(w, chat.id, one.id, { optionIds: ["3"] })).status).toBe(202);
    await settle(room(chat.id), clock);
    const many = (await ask(w, chat.id, clock, "/choose+ Which days? | Mon | Tue")).question;
    expect(many).toMatchObject({ kind: "choice", multiSelect: true, allowText: false });
  });

  it("asks leave for demo_action with /approve and a connection at APP_ORIGIN/connections/<name> with /connect", async ({ clock, w, chat }) => {
    const approval = (await ask(w, chat.id, clock, "/approve delete the branch old-ui")).question;
    expect(approval).toMatchObject({
      kind: "approval",
      prompt: "May I: delete the branch old-ui?",
      options: null,
      allowText: false,
      action: { name: "demo_action", summary: "delete the branch old-ui", input: {} },
      url: null,
    });
    const connection = (await ask(w, chat.id, clock, "/connect my drive/2")).question;
    expect(connection).toMatchObject({ kind: "connection", prompt: "Connect my drive/2 to go on.", url: `${APP}/connections/my%20drive%2F2`, action: null });
    // Asking again superseded the approval.
    expect((await questionOf(w, chat.id, approval.id)).status).toBe("superseded");
  });

  it("reads demo commands exactly: a choice without labels is text, a bare or unknown command asks nothing", () => {
    expect(demoQuestion("/choose Just tell me", APP)).toMatchObject({ kind: "text", prompt: "Just tell me" });
    expect(demoQuestion("/ask", APP)).toBeUndefined();
    expect(demoQuestion("/ask   ", APP)).toBeUndefined();
    expect(demoQuestion("/asking you", APP)).toBeUndefined();
    expect(demoQuestion(" /ask leading space", APP)).toBeUndefined();
    expect(demoQuestion("/choose+ a | b", APP)).toMatchObject({ kind: "choice", multiSelect: true, options: [{ id: "1", label: "b", description: null }] });
    const long = demoQuestion(`/choose pick | ${Array.from({ length: 25 }, (_, i) => `o${i}`).join(" | ")}`, APP)!;
    expect(long.options).toHaveLength(20);
    expect(localReply({ content: `/ask ${"é".repeat(5000)}` })).toBe("é".repeat(4000));
  });

  it("answers each kind in words: labels in the question's order, text, approval with a reason, connection, decline", async ({ clock, w, chat }) => {
    const cases: [string, unknown, string, string][] = [
      ["/choose+ Pick | Red | Green | Blue", { optionIds: ["3", "1"] }, "Red, Blue", "answered"],
      ["/ask Your name?", { text: "Ana" }, "Ana", "answered"],
      ["/approve ship it", { decision: "approve" }, "Approved.", "answered"],
      ["/approve drop the table", { decision: "deny", reason: "not today" }, "Denied. not today", "answered"],
      ["/connect github", { connected: true }, "Connected.", "answered"],
      ["/ask How old are you?", { decline: true, reason: "private" }, "Declined. private", "declined"],
      ["/choose Pick | A | B", { decline: true }, "Declined.", "declined"],
    ];
    for (const [command, body, words, status] of cases) {
      const { question: q } = await ask(w, chat.id, clock, command);
      const r = await answer(w, chat.id, q.id, body);
      expect(r.status, r.text).toBe(202);
      expect(r.json).toEqual({ submissionId: expect.any(String), chatId: chat.id, disposition: "started", questionId: q.id });
      const closed = await questionOf(w, chat.id, q.id);
      expect(closed).toMatchObject({ status, answer: body, submissionId: r.json.submissionId, closedAt: expect.any(String) });
      expect(await chatNow(w, chat.id)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
      await settle(room(chat.id), clock);
      const mine = (await peek(w, chat.id)).filter((m) => m.submissionId === r.json.submissionId);
      expect(mine.map((m) => [m.role, m.status])).toEqual([
        ["owner", "success"],
        ["user", null],
      ]);
      expect(mine[1]!.content, command).toBe(words);
      expect(mine[0]!.content).toBe(localReply({ content: words }));
      expect((await submissionOf(w, chat.id, r.json.submissionId)).state).toMatchObject({ status: "done", credits: { charged: 1, refunded: 0 } });
    }
  }, 20_000);

  it("lets an ordinary send answer a text question (and a choice that takes text) and supersede any other", async ({ clock, w, chat }) => {
    const text = (await ask(w, chat.id, clock, "/ask Which city?")).question;
    const sent = await send(w, chat.id, "Lisbon");
    expect((await questionOf(w, chat.id, text.id)).status).toBe("answered");
    expect(await questionOf(w, chat.id, text.id)).toMatchObject({ answer: { text: "Lisbon" }, submissionId: sent.json.submissionId });
    await settle(room(chat.id), clock);

    const approval = (await ask(w, chat.id, clock, "/approve merge")).question;
    const other = await send(w, chat.id, "never mind, do something else");
    expect(await questionOf(w, chat.id, approval.id)).toMatchObject({ status: "superseded", answer: null, submissionId: other.json.submissionId });
    expect(await chatNow(w, chat.id)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
    await settle(room(chat.id), clock);
    // The superseding send runs as itself, not as an answer.
    expect((await peek(w, chat.id)).find((m) => m.submissionId === other.json.submissionId && m.role === "user")!.content).toBe("never mind, do something else");
  });

  it("lets a steering text answer a question pending while a task runs, as steering: no task of its own", async ({ clock, w, chat }) => {
    await send(w, chat.id, "/ask First question?");
    await send(w, chat.id, "queued before it was asked");
    // The first task ends and asks; the second starts with the question pending.
    for (let i = 0; i < 6 && (await chatNow(w, chat.id)).pendingQuestionId === null; i++) await runNextAlarm(room(chat.id), clock);
    const q = (await chatNow(w, chat.id)).pendingQuestionId!;
    expect(q).not.toBeNull();
    await runNextAlarm(room(chat.id), clock);
    const running = await workingReply(w, chat.id);
    const steered = await steer(w, chat.id, "my answer");
    expect(steered.json.disposition).toBe("queued");
    expect(await questionOf(w, chat.id, q)).toMatchObject({ status: "answered", answer: { text: "my answer" }, submissionId: steered.json.submissionId });
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).find((m) => m.id === running.id)!.content).toContain("Noted: “my answer”");
    expect((await submissionOf(w, chat.id, steered.json.submissionId)).state).toMatchObject({ status: "done", taskId: running.taskId });
    expect((await queueOf(w, chat.id)).items).toEqual([]);
  });

  it("streams the whole Question when asked and when closed, each time before the chat event of the same change", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    const { question: q } = await ask(w, chat.id, clock, "/choose Size? | S | M");
    const asked = await s.until((e) => e.type === "question" && e.data.status === "pending");
    expect(asked.data).toEqual(q);
    const end = s.events.find((e) => e.type === "message" && e.data.id === q.messageId && e.data.status === "success")!;
    expect(end.data.questionId, "the reply's final message event names its question").toBe(q.id);
    expect(end.id).toBeLessThan(asked.id);
    const chatEvent = await s.until((e) => e.type === "chat" && e.id > asked.id);
    expect(chatEvent.id).toBe(asked.id + 1);
    expect(chatEvent.data).toMatchObject({ pendingQuestionId: q.id, isAwaitingUser: true });
    expect(s.events.some((e) => e.type === "chat" && e.id < asked.id && e.data.pendingQuestionId === q.id)).toBe(false);

    const r = await answer(w, chat.id, q.id, { optionIds: ["2"] });
    const closed = await s.until((e) => e.type === "question" && e.data.status === "answered");
    expect(closed.data).toEqual(await questionOf(w, chat.id, q.id));
    const after = await s.until((e) => e.type === "chat" && e.id > closed.id);
    expect(after.data).toMatchObject({ pendingQuestionId: null, isAwaitingUser: false });
    expect(closed.data.submissionId).toBe(r.json.submissionId);
    await s.close();
  });

  it("records question.asked and question.closed for webhooks with the state at each event, and chat.awaiting_user once", async ({ clock, w, chat }) => {
    await recordingEvents(w, "submission.failed");
    // Both accepted before either asks: the second task's question supersedes the first's, and the chat stays awaiting.
    await send(w, chat.id, "/ask One?");
    const second = (await ask(w, chat.id, clock, "/ask Two?")).question;
    const first = Question.parse((await outboxPayloads(chat.id, "question.asked"))[0].data.question);
    expect(first).toMatchObject({ prompt: "One?", status: "pending" });
    const r = await answer(w, chat.id, second.id, { text: "two" });
    const rows = (await outboxOf(chat.id)).filter((e) => e.type.startsWith("question.") || e.type === "chat.awaiting_user");
    expect(rows.map((e) => e.type)).toEqual(["question.asked", "chat.awaiting_user", "question.closed", "question.asked", "question.closed"]);
    const payloads = await Promise.all(rows.map(async (e) => JSON.parse((await room(chat.id).webhookPayload(e.id))!)));
    expect(payloads[0]).toMatchObject({ type: "question.asked", data: { projectId: w.projectId, chatId: chat.id, question: { ...first, status: "pending" } } });
    expect(payloads[2].data.question).toEqual(await questionOf(w, chat.id, first.id));
    expect(payloads[2].data.question).toMatchObject({ id: first.id, status: "superseded", answer: null, submissionId: null });
    // Read after it closed, the asked event still shows the question as it was asked.
    expect(payloads[3].data.question).toEqual(second);
    expect(payloads[4].data.question).toMatchObject({ id: second.id, status: "answered", answer: { text: "two" }, submissionId: r.json.submissionId });
  });
});
