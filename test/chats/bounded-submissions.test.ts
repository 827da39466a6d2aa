import { runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { FAILED_KEPT_BYTES } from "../../src/chats/room/submission-storage";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { cancel, steer } from "./control-helpers";
import { SENT_BY_TEST, expectProblem, newChat, queueOf, room, send, world, type World } from "../helpers";
import { it } from "../fixtures/chat";

const stored = (chatId: string) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) => ({
    text: state.storage.sql.exec<{ n: number }>("SELECT COALESCE(SUM(length(CAST(content AS BLOB))), 0) AS n FROM submissions").one().n,
    rows: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM submissions").one().n,
    database: state.storage.sql.databaseSize,
  }));
const textOf = (chatId: string, id: string) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) => state.storage.sql.exec<{ content: string }>("SELECT content FROM submissions WHERE id = ?", id).one().content);

/** A send straight to the chat's object, as the route makes it once the token is admitted: the test sends faster than a token may. */
function submitDirect(w: World, chatId: string, content: string) {
  const at = Date.now();
  const seen = { maintenance: { value: false, at }, project: { value: { status: "active" as const, ownerAccountId: w.account.id }, at } };
  return room(chatId).submit(w.projectId, { kind: "send", idempotencyKey: crypto.randomUUID(), content, replyToMessageId: null, ...SENT_BY_TEST, seen });
}

describe("what a chat keeps of its submissions", () => {
  it("drops the text of one that ran, and still tells a replay from a changed body", async ({ clock, w, chat }) => {
    const key = crypto.randomUUID();
    const sent = await send(w, chat.id, "build it", key);
    await settle(room(chat.id), clock);
    expect(await textOf(chat.id, sent.json.submissionId)).toBe("");
    const replay = await send(w, chat.id, "build it", key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.json.submissionId).toBe(sent.json.submissionId);
    expectProblem(await send(w, chat.id, "build something else", key), 409, "idempotency_key_reused");
    expectProblem(await steer(w, chat.id, "build it", key), 409, "idempotency_key_reused");
  });

  it("drops the text of a cancelled one and of a taken steering text; their keys keep their answers", async ({ clock, w, chat }) => {
    await send(w, chat.id, "first");
    const queuedKey = crypto.randomUUID();
    const queued = await send(w, chat.id, "never mind", queuedKey);
    expect((await cancel(w, chat.id, queued.json.submissionId)).status).toBe(204);
    expect(await textOf(chat.id, queued.json.submissionId)).toBe("");
    expectProblem(await send(w, chat.id, "never mind", queuedKey), 409, "submission_cancelled");
    expectProblem(await send(w, chat.id, "changed", queuedKey), 409, "idempotency_key_reused");

    await runNextAlarm(room(chat.id), clock);
    const steerKey = crypto.randomUUID();
    const steered = await steer(w, chat.id, "use blue", steerKey);
    await settle(room(chat.id), clock);
    expect(await textOf(chat.id, steered.json.submissionId)).toBe("");
    expect((await steer(w, chat.id, "use blue", steerKey)).headers.get("idempotency-replayed")).toBe("true");
  });

  it("stays bounded under failing sends at the full rate: the queue's failed entries keep their text, the rest keep a hash", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const big = "x".repeat(100_000);
    const first = await submitDirect(w, c.id, big);
    for (let i = 0; i < 149; i++) {
      expect((await submitDirect(w, c.id, big)).kind).toBe("accepted");
      // The queue holds 1,000,000 bytes of waiting text: the alarm fails them before more fit.
      if (i % 5 === 0) await settle(room(c.id), clock);
    }
    await settle(room(c.id), clock);
    const after = await stored(c.id);
    expect(after.rows).toBe(150);
    // Only the failed entries the queue keeps (at most 1,000,000 bytes) hold their text.
    expect(after.text).toBeLessThanOrEqual(FAILED_KEPT_BYTES);
    expect((await queueOf(w, c.id)).items.length).toBeLessThanOrEqual(10);
    if (first.kind !== "accepted") throw new Error(first.kind);
    expect(await textOf(c.id, first.submission.submissionId)).toBe("");
    // A day on, the failed entries leave the queue and their text goes too.
    clock.advance(25 * 3600_000);
    await runNextAlarm(room(c.id), clock);
    expect((await stored(c.id)).text).toBe(0);
    expect((await queueOf(w, c.id)).items).toEqual([]);
  }, 60_000);
});
