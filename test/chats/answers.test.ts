import { evictDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { localReply } from "../../src/agent/local";
import { QUEUE_MAX_BYTES } from "../../src/chats/limits";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { admin, call, chatsPath, expectProblem, newAccount, newChat, newToken, peek, queueOf, room, send, signIn } from "../helpers";
import { cancel, steer, submissionOf } from "./control-helpers";
import { answer, ask, chatNow, getQuestion, questionOf, questionPath } from "./question-helpers";
import { it } from "../fixtures/chat";

const replayed = (r: { headers: Headers }) => r.headers.get("idempotency-replayed") === "true";

describe("answering a question: the checks, in the contract's order", () => {
  it("refuses a body that is none of the shapes, or out of range, with 400 before anything else", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/choose Pick a fruit | Apple | Pear");
    const shapes: [unknown, string][] = [
      [{}, "an empty object"],
      [{ optionIds: "1" }, "optionIds not an array"],
      [{ optionIds: [1] }, "an option id that is not a string"],
      [{ optionIds: ["x".repeat(65)] }, "an option id longer than 64"],
      [{ optionIds: Array.from({ length: 21 }, (_, i) => String(i)) }, "more than 20 option ids"],
      [{ decision: "maybe" }, "an unknown decision"],
      [{ connected: false }, "connected false"],
      [{ decline: false }, "decline false"],
      [{ text: "" }, "an empty text"],
      [{ text: "x".repeat(100_001) }, "a text over 100000 characters"],
      [{ decision: "deny", reason: "r".repeat(2001) }, "a reason over 2000 characters"],
      [{ decline: true, reason: "r".repeat(2001) }, "a decline's reason over 2000 characters"],
      [{ decision: "approve", connected: true }, "two shapes at once"],
      [{ text: "hi", extra: 1 }, "an unknown field"],
      [[{ text: "hi" }], "an array"],
      ["hi", "a string"],
    ];
    for (const [body, what] of shapes) {
      const r = await answer(w, chat.id, q.id, body);
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors.length, what).toBeGreaterThan(0);
    }
    // The problem names the shape the body came closest to, and its field.
    expect((await answer(w, chat.id, q.id, { text: "" })).json.errors).toEqual([{ path: "text", message: "text must be 1 to 100000 characters" }]);
    expect((await answer(w, chat.id, q.id, {})).json.errors[0].message).toMatch(/^The answer must be exactly one of \{ optionIds, text\? \}.*\.$/);
    const path = `${questionPath(w, chat.id, q.id)}/answer`;
    const key = { "idempotency-key": crypto.randomUUID(), "content-type": "application/json" };
    expectProblem(await call("POST", path, { token: w.token, headers: key, raw: "{not json" }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, body: { optionIds: ["1"] } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": "nope" }, body: { optionIds: ["1"] } }), 400, "invalid_request");
    // 400 before 404: for an unknown question, and an unknown chat.
    expectProblem(await answer(w, chat.id, crypto.randomUUID(), { decision: "maybe" }), 400, "invalid_request");
    expectProblem(await answer(w, crypto.randomUUID(), crypto.randomUUID(), { decision: "maybe" }), 400, "invalid_request");
    expect((await questionOf(w, chat.id, q.id)).status).toBe("pending");
  }, 20_000);

  it("answers 404 question_not_found for an unknown, malformed or other chat's question, and not_found for a chat or project out of reach", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Here?");
    const other = await newChat(w);
    expectProblem(await answer(w, chat.id, crypto.randomUUID(), { text: "x" }), 404, "question_not_found");
    expectProblem(await answer(w, chat.id, "not-a-uuid", { text: "x" }), 404, "question_not_found");
    expectProblem(await answer(w, other.id, q.id, { text: "x" }), 404, "question_not_found");
    expectProblem(await getQuestion(w, other.id, q.id), 404, "question_not_found");
    expectProblem(await getQuestion(w, chat.id, "not-a-uuid"), 404, "question_not_found");
    expectProblem(await answer(w, crypto.randomUUID(), q.id, { text: "x" }), 404, "not_found");
    const stranger = await newToken(await signIn(await newAccount()));
    expectProblem(await answer(w, chat.id, q.id, { text: "x" }, crypto.randomUUID(), stranger), 404, "not_found");
    expectProblem(await getQuestion(w, chat.id, q.id, stranger), 404, "not_found");
    expect((await questionOf(w, chat.id, q.id)).status).toBe("pending");
  });

  it("lets readers read and only writers answer: a viewer 403 forbidden, chat:read 403 insufficient_scope, no token 401", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/approve publish");
    const viewer = await newAccount();
    await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" });
    const viewerToken = await newToken(await signIn(viewer));
    expect((await getQuestion(w, chat.id, q.id, viewerToken)).status).toBe(200);
    expectProblem(await answer(w, chat.id, q.id, { decision: "approve" }, crypto.randomUUID(), viewerToken), 403, "forbidden");
    const readOnly = await newToken(w.session, ["chat:read"]);
    expectProblem(await answer(w, chat.id, q.id, { decision: "approve" }, crypto.randomUUID(), readOnly), 403, "insufficient_scope");
    expectProblem(await getQuestion(w, chat.id, q.id, await newToken(w.session, ["chat:write"])), 403, "insufficient_scope");
    expectProblem(await call("POST", `${questionPath(w, chat.id, q.id)}/answer`, { headers: { "idempotency-key": crypto.randomUUID() }, body: { decision: "approve" } }), 401);
    expect((await questionOf(w, chat.id, q.id)).status).toBe("pending");
  });

  it("looks at the key before the chat's state, the question's status and the fit: a replay, or idempotency_key_reused", async ({ clock, w, chat }) => {
    const sendKey = crypto.randomUUID();
    await send(w, chat.id, "first", sendKey);
    const steerKey = crypto.randomUUID();
    await steer(w, chat.id, "steered", steerKey);
    await settle(room(chat.id), clock);
    const { question: q } = await ask(w, chat.id, clock, "/choose Size | S | L");
    expectProblem(await answer(w, chat.id, q.id, { optionIds: ["9"] }, sendKey), 409, "idempotency_key_reused");
    expectProblem(await answer(w, chat.id, q.id, { optionIds: ["1"] }, steerKey), 409, "idempotency_key_reused");
    expect((await questionOf(w, chat.id, q.id)).status).toBe("pending");

    const key = crypto.randomUUID();
    const first = await answer(w, chat.id, q.id, { optionIds: ["2"] }, key);
    expect(first.status).toBe(202);
    expect(replayed(first)).toBe(false);
    const again = await answer(w, chat.id, q.id, { optionIds: ["2"] }, key);
    expect(again.status).toBe(202);
    expect(replayed(again)).toBe(true);
    expect(again.json).toEqual(first.json);
    expectProblem(await answer(w, chat.id, q.id, { decline: true, reason: "r" }, key), 409, "idempotency_key_reused");
    expectProblem(await answer(w, chat.id, q.id, { optionIds: ["1"] }, key), 409, "idempotency_key_reused");
    expectProblem(await answer(w, chat.id, q.id, { optionIds: [] }, key), 409, "idempotency_key_reused");
    expectProblem(await send(w, chat.id, "L", key), 409, "idempotency_key_reused");
    expectProblem(await steer(w, chat.id, "L", key), 409, "idempotency_key_reused");
    await settle(room(chat.id), clock);

    const { question: q2 } = await ask(w, chat.id, clock, "/choose Size again | S | L");
    expectProblem(await answer(w, chat.id, q2.id, { optionIds: ["2"] }, key), 409, "idempotency_key_reused");
    // Long after the question closed, and on an archived chat: the key still replays.
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    const late = await answer(w, chat.id, q.id, { optionIds: ["2"] }, key);
    expect(late.status).toBe(202);
    expect(replayed(late)).toBe(true);
    expect(late.json).toEqual(first.json);
    expect((await peek(w, chat.id)).filter((m) => m.role === "user" && m.content === "L")).toHaveLength(1);
  }, 20_000);

  it("replays an answer sent with its fields in another order", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/approve deploy");
    const key = crypto.randomUUID();
    const path = `${questionPath(w, chat.id, q.id)}/answer`;
    const raw = (body: string) => call("POST", path, { token: w.token, headers: { "idempotency-key": key, "content-type": "application/json" }, raw: body });
    const first = await raw('{"decision":"deny","reason":"later"}');
    expect(first.status).toBe(202);
    const again = await raw('{"reason":"later","decision":"deny"}');
    expect(again.status).toBe(202);
    expect(replayed(again)).toBe(true);
    expect((await questionOf(w, chat.id, q.id)).answer).toEqual({ decision: "deny", reason: "later" });
  });

  it("answers chat_archived after the key, before question_not_pending and the fit; the question stays pending", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Archive it?");
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await answer(w, chat.id, q.id, { text: "yes" }), 409, "chat_archived");
    expectProblem(await answer(w, chat.id, q.id, { decision: "approve" }), 409, "chat_archived");
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: q.id, isAwaitingUser: true });
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/restore`, { token: w.token })).status).toBe(200);
    expect((await answer(w, chat.id, q.id, { text: "restored" })).status).toBe(202);
  });

  it("answers question_not_pending, naming the status, before the fit", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/choose A or B | A | B");
    expect((await answer(w, chat.id, q.id, { optionIds: ["1"] })).status).toBe(202);
    const twice = await answer(w, chat.id, q.id, { optionIds: ["2"] });
    expectProblem(twice, 409, "question_not_pending");
    expect(twice.json.detail).toBe("This question is answered; it takes no more answers.");
    expectProblem(await answer(w, chat.id, q.id, { decision: "approve" }), 409, "question_not_pending");
    await settle(room(chat.id), clock);
    const { question: declined } = await ask(w, chat.id, clock, "/ask Why?");
    expect((await answer(w, chat.id, declined.id, { decline: true })).status).toBe(202);
    expect((await answer(w, chat.id, declined.id, { text: "because" })).json.detail).toMatch(/is declined;/);
  });

  it("answers answer_does_not_fit for a body its kind does not take, and changes nothing", async ({ clock, w, chat }) => {
    const misfits: [string, unknown[]][] = [
      [
        "/choose Pick | A | B",
        [
          { optionIds: ["3"] },
          { optionIds: ["1", "2"] },
          { optionIds: ["1", "1"] },
          { optionIds: [] },
          { text: "C" },
          { optionIds: ["1"], text: "and C" },
          { decision: "approve" },
          { connected: true },
        ],
      ],
      ["/choose+ Pick some | A | B", [{ optionIds: [] }, { optionIds: ["1", "1"] }, { text: "C" }]],
      ["/ask Name?", [{ optionIds: ["1"] }, { optionIds: [] }, { decision: "deny" }, { connected: true }]],
      ["/approve run it", [{ text: "yes" }, { optionIds: ["1"] }, { connected: true }]],
      ["/connect slack", [{ text: "done" }, { decision: "approve" }, { optionIds: [] }]],
    ];
    for (const [command, bodies] of misfits) {
      const { question: q } = await ask(w, chat.id, clock, command);
      for (const body of bodies) {
        const r = await answer(w, chat.id, q.id, body);
        expectProblem(r, 400, "answer_does_not_fit");
        expect(r.json.detail, `${command} ${JSON.stringify(body)}`).toMatch(/^The answer does not fit this question: ./);
      }
      expect(await questionOf(w, chat.id, q.id)).toMatchObject({ status: "pending", answer: null });
      expect((await queueOf(w, chat.id)).items).toEqual([]);
      // Declining fits every kind.
      expect((await answer(w, chat.id, q.id, { decline: true })).status).toBe(202);
      await settle(room(chat.id), clock);
    }
  }, 20_000);

  it(`answers queue_full last, when the answer's words would pass the queue's ${QUEUE_MAX_BYTES} bytes`, async ({ clock, w, chat }) => {
    await send(w, chat.id, "/ask Tell me more");
    await runNextAlarm(room(chat.id), clock); // the asking task runs: it holds no place in the queue
    // Accepted before the question: the first runs when the asking task ends; the rest wait, 999,990 bytes.
    expect((await send(w, chat.id, "next")).status).toBe(202);
    for (let i = 0; i < 3; i++) expect((await send(w, chat.id, "€".repeat(100_000))).status).toBe(202);
    expect((await send(w, chat.id, "x".repeat(99_990))).status).toBe(202);
    for (let part = 0; part < 4; part++) await runNextAlarm(room(chat.id), clock);
    const q = (await chatNow(w, chat.id)).pendingQuestionId!;
    expect(q).not.toBeNull();
    expectProblem(await answer(w, chat.id, q, { optionIds: ["1"] }), 400, "answer_does_not_fit");
    const full = await answer(w, chat.id, q, { text: "eleven char" });
    expectProblem(full, 409, "queue_full");
    expect((await questionOf(w, chat.id, q)).status).toBe("pending");
    expect((await answer(w, chat.id, q, { text: "ten chars!" })).status).toBe(202);
  });
});

describe("an answer is a send", () => {
  it("queues behind a running task and can be cancelled like any submission; the question stays answered", async ({ clock, w, chat }) => {
    await send(w, chat.id, "/ask Colour?");
    await send(w, chat.id, "keeps the agent busy");
    for (let i = 0; i < 6 && (await chatNow(w, chat.id)).pendingQuestionId === null; i++) await runNextAlarm(room(chat.id), clock);
    const q = (await chatNow(w, chat.id)).pendingQuestionId!;
    const key = crypto.randomUUID();
    const r = await answer(w, chat.id, q, { text: "blue" }, key);
    expect(r.json).toMatchObject({ disposition: "queued", questionId: q });
    expect((await queueOf(w, chat.id)).items.map((e) => [e.id, e.content, e.status])).toEqual([[r.json.submissionId, "blue", "queued"]]);
    expect((await cancel(w, chat.id, r.json.submissionId)).status).toBe(204);
    expectProblem(await answer(w, chat.id, q, { text: "blue" }, key), 409, "submission_cancelled");
    expect(await questionOf(w, chat.id, q)).toMatchObject({ status: "answered", submissionId: r.json.submissionId });
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).some((m) => m.content === "blue")).toBe(false);
  });
});

describe("answers at the same time", () => {
  it("lets exactly one of two answers with different keys win; the other is question_not_pending", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/choose Pick | A | B");
    const [a, b] = await Promise.all([answer(w, chat.id, q.id, { optionIds: ["1"] }), answer(w, chat.id, q.id, { optionIds: ["2"] })]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([202, 409]);
    const winner = a.status === 202 ? a : b;
    expectProblem(a.status === 202 ? b : a, 409, "question_not_pending");
    expect((await questionOf(w, chat.id, q.id)).submissionId).toBe(winner.json.submissionId);
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).filter((m) => m.role === "user" && (m.content === "A" || m.content === "B"))).toHaveLength(1);
  });

  it("makes one submission of the same answer sent in parallel with one key", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Once?");
    const key = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => answer(w, chat.id, q.id, { text: "once" }, key)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((r) => r.json.submissionId)).size).toBe(1);
    expect(answers.filter((r) => !replayed(r))).toHaveLength(1);
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).filter((m) => m.content === "once")).toHaveLength(1);
  });

  it("closes the question once when an answer and an ordinary send race", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/approve go");
    const [answered, sent] = await Promise.all([answer(w, chat.id, q.id, { decision: "approve" }), send(w, chat.id, "something else")]);
    expect(sent.status).toBe(202);
    const closed = await questionOf(w, chat.id, q.id);
    if (answered.status === 202) expect(closed).toMatchObject({ status: "answered", submissionId: answered.json.submissionId });
    else {
      expectProblem(answered, 409, "question_not_pending");
      expect(closed).toMatchObject({ status: "superseded", submissionId: sent.json.submissionId });
    }
  });
});

describe("a question across restarts of its chat's object", () => {
  it("is answered after the object restarts, and the answer runs after another restart", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/choose+ Toppings | Cheese | Basil | Olives");
    await evictDurableObject(room(chat.id));
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: q.id, isAwaitingUser: true });
    const r = await answer(w, chat.id, q.id, { optionIds: ["3", "1"] });
    expect(r.status).toBe(202);
    await evictDurableObject(room(chat.id));
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: null, isAwaitingUser: false });
    expect((await answer(w, chat.id, q.id, { optionIds: ["2"] })).json.code).toBe("question_not_pending");
    await settle(room(chat.id), clock);
    const mine = (await peek(w, chat.id)).filter((m) => m.submissionId === r.json.submissionId);
    expect(mine.map((m) => m.content)).toEqual([localReply({ content: "Cheese, Olives" }), "Cheese, Olives"]);
    expect((await submissionOf(w, chat.id, r.json.submissionId)).state!.status).toBe("done");
    // Nothing is due any more: the expiry went with the answer.
    expect(await alarmOf(room(chat.id))).toBeNull();
  });
});
