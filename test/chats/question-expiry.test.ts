import { evictDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { config } from "../../src/config";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { call, chatsPath, creditsOf, env, expectProblem, peek, room, send } from "../helpers";
import { openEvents } from "../sse";
import { outboxOf, recordingEvents } from "../webhooks/webhook-helpers";
import { answer, ask, chatNow, questionOf } from "./question-helpers";
import { it } from "../fixtures/chat";

const TTL_MS = 168 * 3_600_000;

describe("a question's expiry", () => {
  it("comes QUESTION_TTL_HOURS after it was asked, from the chat's alarm: expired, the chat no longer awaiting, no task", async ({ clock, w, chat }) => {
    expect(config(env).questionTtlMs).toBe(TTL_MS);
    await recordingEvents(w, "submission.failed");
    const { question: q } = await ask(w, chat.id, clock, "/choose Which? | This | That");
    const expiresAt = Date.parse(q.expiresAt);
    expect(expiresAt - Date.parse(q.createdAt)).toBe(TTL_MS);
    // Nothing else is due: the object's one alarm is the expiry (rounded up to a whole millisecond).
    expect(await alarmOf(room(chat.id))).toBe(Math.ceil(expiresAt));
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    const credits = await creditsOf(w.account.id);
    const messages = (await peek(w, chat.id)).length;

    clock.set(expiresAt - 1);
    expect((await questionOf(w, chat.id, q.id)).status, "still pending a moment before").toBe("pending");
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    const expired = await questionOf(w, chat.id, q.id);
    expect(expired).toMatchObject({ status: "expired", answer: null, submissionId: null, closedAt: new Date(clock.now()).toISOString(), expiresAt: q.expiresAt });
    expect(await chatNow(w, chat.id)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null, isWorking: false, updatedAt: new Date(clock.now()).toISOString() });
    const event = await s.until((e) => e.type === "question" && e.data.status === "expired");
    expect(event.data).toEqual(expired);
    expect((await s.until((e) => e.type === "chat" && e.id > event.id)).data.pendingQuestionId).toBeNull();
    await s.close();
    expect((await outboxOf(chat.id)).map((e) => e.type).at(-1)).toBe("question.closed");
    // Expiry starts no task and costs nothing.
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).length).toBe(messages);
    expect(await creditsOf(w.account.id)).toBe(credits);
    const late = await answer(w, chat.id, q.id, { optionIds: ["1"] });
    expectProblem(late, 409, "question_not_pending");
    expect(late.json.detail).toBe("This question is expired; it takes no more answers.");
    expect(await alarmOf(room(chat.id))).toBeNull();
  });

  it("is scheduled from storage after the object restarts", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Still there?");
    await evictDurableObject(room(chat.id));
    // The first request after the restart reads the pending question again; the alarm it set is kept by the runtime.
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: q.id });
    expect(await alarmOf(room(chat.id))).toBe(Date.parse(q.expiresAt));
    await evictDurableObject(room(chat.id));
    clock.set(Date.parse(q.expiresAt) - 1);
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    expect((await questionOf(w, chat.id, q.id)).status).toBe("expired");
  });

  it("follows the newest question: a later one moves the expiry, an answer removes it", async ({ clock, w, chat }) => {
    const first = (await ask(w, chat.id, clock, "/approve one")).question;
    clock.advance(3_600_000);
    await send(w, chat.id, "/approve two");
    await settle(room(chat.id), clock);
    const second = await questionOf(w, chat.id, (await chatNow(w, chat.id)).pendingQuestionId!);
    expect((await questionOf(w, chat.id, first.id)).status).toBe("superseded");
    expect(await alarmOf(room(chat.id))).toBe(Date.parse(second.expiresAt));
    expect((await answer(w, chat.id, second.id, { decision: "approve" })).status).toBe(202);
    await settle(room(chat.id), clock);
    expect(await alarmOf(room(chat.id))).toBeNull();
  });

  it("still comes while the chat is archived; the chat is then no longer awaiting", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/connect drive");
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: q.id, isAwaitingUser: true });
    clock.set(Date.parse(q.expiresAt));
    await settle(room(chat.id), clock);
    expect((await questionOf(w, chat.id, q.id)).status).toBe("expired");
    expect(await chatNow(w, chat.id)).toMatchObject({ pendingQuestionId: null, isAwaitingUser: false, archivedAt: expect.any(String) });
  });
});
