import { describe, expect } from "vitest";
import { Chain } from "../../src/chats/chain-schemas";
import { runNextAlarm, settle } from "../clock";
import { admin, call, chatOf, chatsPath, creditsOf, expectProblem, newAccount, newChat, newToken, room, send, signIn, world, type World } from "../helpers";
import { sql, steer, submissionOf, workingReply } from "./control-helpers";
import { answer, ask, questionOf } from "./question-helpers";
import { it } from "../fixtures/chat";

const chainPath = (w: World, chatId: string, submissionId: string) => `${chatsPath(w)}/${chatId}/submissions/${submissionId}/chain`;
async function chainOf(w: World, chatId: string, submissionId: string) {
  const r = await call("GET", chainPath(w, chatId, submissionId), { token: w.token });
  expect(r.status, r.text).toBe(200);
  return Chain.parse(r.json);
}
async function cancelChain(w: World, chatId: string, submissionId: string, token = w.token) {
  return call("POST", `${chainPath(w, chatId, submissionId)}/cancel`, { token });
}

describe("the chain of a submission", () => {
  it("follows a question to the answer's submission, whichever submission it is read from", async ({ clock, w, chat }) => {
    const { question, submissionId: root } = await ask(w, chat.id, clock, "/choose Which theme? | Light | Dark");
    const asked = await chainOf(w, chat.id, root);
    expect(asked).toMatchObject({ rootId: root, state: "awaiting", links: [{ submissionId: root, questionId: question.id }] });
    expect(asked.question).toMatchObject({ id: question.id, status: "pending" });
    expect(asked.reply).toMatchObject({ status: "success", questionId: question.id });

    const answered = await answer(w, chat.id, question.id, { optionIds: ["2"] });
    expect(answered.status, answered.text).toBe(202);
    const next = answered.json.submissionId as string;
    // On an idle chat the answer's task is dispatched at once.
    expect(await chainOf(w, chat.id, root)).toMatchObject({ rootId: root, state: "working", end: { id: next }, reply: null, question: null });
    await settle(room(chat.id), clock);
    const done = await chainOf(w, chat.id, root);
    expect(done).toMatchObject({ state: "completed", end: { id: next, status: "done" }, reply: { status: "success" }, question: null });
    expect(done.links).toEqual([
      { submissionId: root, questionId: question.id, questionKind: "choice" },
      { submissionId: next, questionId: null, questionKind: null },
    ]);
    // Read from the answer: the same chain, from there on.
    expect(await chainOf(w, chat.id, next)).toMatchObject({ rootId: root, state: "completed", links: [{ submissionId: next, questionId: null }] });
  });

  it("takes a send that answers a text question into the chain, and leaves a send that supersedes a choice out of it", async ({ clock, w, chat }) => {
    const { submissionId: root } = await ask(w, chat.id, clock, "/ask Your name?");
    const byText = await send(w, chat.id, "Ada");
    expect((await chainOf(w, chat.id, root)).end.id).toBe(byText.json.submissionId);
    await settle(room(chat.id), clock);

    const { question, submissionId: chooser } = await ask(w, chat.id, clock, "/choose Pick | A | B");
    const other = await send(w, chat.id, "never mind");
    const superseded = await chainOf(w, chat.id, chooser);
    expect(superseded).toMatchObject({ state: "completed", end: { id: chooser }, question: { id: question.id, status: "superseded" } });
    expect(await chainOf(w, chat.id, other.json.submissionId)).toMatchObject({ rootId: other.json.submissionId, links: [{ submissionId: other.json.submissionId }] });
  });

  it("is working while its end is dispatched or runs, failed when its reply failed, and completed when its question expired", async ({ clock, w, chat }) => {
    const sent = await send(w, chat.id, "write a long answer");
    await runNextAlarm(room(chat.id), clock);
    expect((await chainOf(w, chat.id, sent.json.submissionId)).state).toBe("working");
    await settle(room(chat.id), clock);
    const reply = (await chainOf(w, chat.id, sent.json.submissionId)).reply!;
    // A reply that failed (an agent's failure), written as the runner writes it.
    await sql(chat.id, "UPDATE messages SET status = 'failed' WHERE id = ?", reply.id);
    expect((await chainOf(w, chat.id, sent.json.submissionId)).state).toBe("failed");

    const { submissionId } = await ask(w, chat.id, clock, "/ask Still there?");
    clock.advance(169 * 3_600_000);
    await settle(room(chat.id), clock);
    expect(await chainOf(w, chat.id, submissionId)).toMatchObject({ state: "completed", question: { status: "expired" } });
  });

  it("is refused when its end could not start for want of credits", async ({ clock }) => {
    const poor = await world({ credits: 0 });
    const c = await newChat(poor);
    const sent = await send(poor, c.id, "hello");
    await settle(room(c.id), clock);
    const chain = await chainOf(poor, c.id, sent.json.submissionId);
    expect(chain).toMatchObject({ state: "refused", end: { status: "failed", failure: { code: "insufficient_credits" } } });
  });

  it("goes on from a submission kept before roots were: an answer to its question joins its chain", async ({ clock, w, chat }) => {
    const { question, submissionId: root } = await ask(w, chat.id, clock, "/ask Name?");
    await sql(chat.id, "UPDATE submissions SET chain_root_id = NULL");
    const answered = await answer(w, chat.id, question.id, { text: "Ada" });
    await settle(room(chat.id), clock);
    expect(await chainOf(w, chat.id, root)).toMatchObject({ rootId: root, state: "completed", end: { id: answered.json.submissionId } });
  });

  it("is working while a steering text it ended with is in the running task's reply, and cancelling it stops that reply", async ({ clock, w, chat }) => {
    await send(w, chat.id, "write a long answer");
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock);
    const steered = await steer(w, chat.id, "shorter please");
    await runNextAlarm(room(chat.id), clock);
    const chain = await chainOf(w, chat.id, steered.json.submissionId);
    expect(chain).toMatchObject({ state: "working", end: { status: "done" }, reply: { status: "working" } });
    const r = await cancelChain(w, chat.id, steered.json.submissionId);
    expect(Chain.parse(r.json)).toMatchObject({ state: "cancelled", reply: { status: "interrupted_by_user" } });
  });

  it("reads a submission from before chains were kept as a chain of its own", async ({ clock, w, chat }) => {
    const sent = await send(w, chat.id, "old");
    await settle(room(chat.id), clock);
    await sql(chat.id, "UPDATE submissions SET chain_root_id = NULL");
    expect(await chainOf(w, chat.id, sent.json.submissionId)).toMatchObject({
      rootId: sent.json.submissionId,
      state: "completed",
      links: [{ submissionId: sent.json.submissionId }],
    });
  });
});

describe("cancelling a chain", () => {
  it("cancels a queued end as DELETE …/queue/{id} does", async ({ clock, w, chat }) => {
    await send(w, chat.id, "first");
    const sent = await send(w, chat.id, "wait for me");
    expect((await chainOf(w, chat.id, sent.json.submissionId)).state).toBe("queued");
    const r = await cancelChain(w, chat.id, sent.json.submissionId);
    expect(r.status, r.text).toBe(200);
    expect(Chain.parse(r.json)).toMatchObject({ state: "cancelled", end: { status: "cancelled" } });
    await settle(room(chat.id), clock);
    expect((await submissionOf(w, chat.id, sent.json.submissionId)).state!.status).toBe("cancelled");
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it("stops a working end's reply", async ({ clock, w, chat }) => {
    const sent = await send(w, chat.id, "write a long answer");
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    const r = await cancelChain(w, chat.id, sent.json.submissionId);
    expect(Chain.parse(r.json)).toMatchObject({ state: "cancelled", reply: { id: reply.id, status: "interrupted_by_user" } });
  });

  it("stops an end that is being dispatched before its agent starts", async ({ clock: _frozen, w, chat }) => {
    // The clock is frozen, so the alarm the send sets never runs the dispatch by itself.
    const sent = await send(w, chat.id, "hello");
    // The dispatch is cut between its steps: the submission stays dispatching until the next alarm.
    await sql(chat.id, "UPDATE submissions SET status = 'dispatching' WHERE id = ?", sent.json.submissionId);
    await cancelChain(w, chat.id, sent.json.submissionId);
    expect((await sql<{ stop_requested: number }>(chat.id, "SELECT stop_requested FROM submissions WHERE id = ?", sent.json.submissionId))[0]!.stop_requested).toBe(1);
  });

  it("withdraws the question an awaiting chain waits on: declined without a submission, nothing charged, the chat no longer awaiting", async ({ clock, w, chat }) => {
    const { question, submissionId: root } = await ask(w, chat.id, clock, "/approve deploy");
    const credits = await creditsOf(w.account.id);
    const r = await cancelChain(w, chat.id, root);
    expect(r.status, r.text).toBe(200);
    expect(Chain.parse(r.json)).toMatchObject({ state: "cancelled", end: { id: root }, question: { id: question.id, status: "declined" } });
    expect(await questionOf(w, chat.id, question.id)).toMatchObject({
      status: "declined",
      submissionId: null,
      answer: { decline: true, reason: "Cancelled by the client" },
    });
    expect(await chatOf(w, chat.id)).toMatchObject({ pendingQuestionId: null, isAwaitingUser: false });
    await settle(room(chat.id), clock);
    expect(await creditsOf(w.account.id)).toBe(credits);
    expect((await sql(chat.id, "SELECT id FROM submissions")).length).toBe(1);
    // An answer now finds the question closed.
    expectProblem(await answer(w, chat.id, question.id, { decision: "approve" }), 409, "question_not_pending");
  });

  it("leaves an ended chain as it is, so a retry is safe", async ({ clock, w, chat }) => {
    const sent = await send(w, chat.id, "done soon");
    await settle(room(chat.id), clock);
    const before = await chainOf(w, chat.id, sent.json.submissionId);
    const r = await cancelChain(w, chat.id, sent.json.submissionId);
    expect(Chain.parse(r.json)).toEqual(before);
    expect(Chain.parse((await cancelChain(w, chat.id, sent.json.submissionId)).json)).toEqual(before);
  });

  it("answers 404 for an unknown submission or chat, 403 to a reader, and 401 without a token", async ({ clock, w, chat }) => {
    const { submissionId } = await ask(w, chat.id, clock, "/ask Here?");
    expectProblem(await cancelChain(w, chat.id, crypto.randomUUID()), 404, "submission_not_found");
    expectProblem(await call("GET", chainPath(w, chat.id, crypto.randomUUID()), { token: w.token }), 404, "submission_not_found");
    expectProblem(await cancelChain(w, crypto.randomUUID(), submissionId), 404, "not_found");
    const stranger = await newToken(await signIn(await newAccount()));
    expectProblem(await cancelChain(w, chat.id, submissionId, stranger), 404, "not_found");
    const viewer = await newAccount();
    await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" });
    const viewerToken = await newToken(await signIn(viewer));
    expect((await call("GET", chainPath(w, chat.id, submissionId), { token: viewerToken })).status).toBe(200);
    expectProblem(await cancelChain(w, chat.id, submissionId, viewerToken), 403, "forbidden");
    expectProblem(await cancelChain(w, chat.id, submissionId, await newToken(w.session, ["chat:read"])), 403, "insufficient_scope");
    expectProblem(await call("POST", `${chainPath(w, chat.id, submissionId)}/cancel`), 401);
    expect((await chainOf(w, chat.id, submissionId)).state).toBe("awaiting");
  });
});
