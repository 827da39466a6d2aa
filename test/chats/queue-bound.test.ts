import { describe, expect } from "vitest";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../../src/chats/limits";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { SENT_BY_TEST, call, chatsPath, expectProblem, newChat, queueOf, room, send, world, type World } from "../helpers";
import { cancel, steer } from "./control-helpers";
import { it } from "../fixtures/chat";
import type { SubmitRequest } from "../../src/chats/room-calls";

/** Submits straight to the chat's object (as the route does after its checks), so filling a queue spends no token budget. */
async function submitDirectly(w: World, chatId: string, content: string, key = crypto.randomUUID()) {
  const at = Date.now();
  const request: SubmitRequest = {
    kind: "send",
    idempotencyKey: key,
    content,
    replyToMessageId: null,
    ...SENT_BY_TEST,
    seen: { maintenance: { value: false, at }, project: { value: { status: "active", ownerAccountId: w.account.id }, at } },
  };
  return room(chatId).submit(w.projectId, request);
}

describe("the queue bound", () => {
  it(`holds at most ${QUEUE_MAX_ENTRIES} pending entries; beyond, a send or steer gets 409 queue_full and nothing is stored`, async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock); // the first task runs: it holds no place in the queue
    const keys: string[] = [];
    for (let i = 0; i < QUEUE_MAX_ENTRIES; i++) {
      keys.push(crypto.randomUUID());
      expect((await submitDirectly(w, chat.id, `m${i}`, keys[i])).kind).toBe("accepted");
    }
    const full = await send(w, chat.id, "one too many");
    expectProblem(full, 409, "queue_full");
    expect(full.json.detail).toMatch(/100 pending entries/);
    expectProblem(await steer(w, chat.id, "nor a steer"), 409, "queue_full");
    const queue = (await queueOf(w, chat.id)).items;
    expect(queue).toHaveLength(QUEUE_MAX_ENTRIES);
    // A replay is answered as the first time, full queue or not.
    const replay = await call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token, headers: { "idempotency-key": keys[7]! }, body: { content: "m7" } });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");

    expect((await cancel(w, chat.id, queue[0]!.id)).status).toBe(204);
    expect((await send(w, chat.id, "fits again")).status).toBe(202);
    expectProblem(await send(w, chat.id, "full again"), 409, "queue_full");
  });

  it(`holds at most ${QUEUE_MAX_BYTES} bytes of content (UTF-8); failed entries do not count`, async () => {
    const clock = frozenClock();
    const w = await world({ credits: 1 });
    const c = await newChat(w);
    const third = "€".repeat(100_000); // 300,000 bytes
    await send(w, c.id, "running");
    await runNextAlarm(room(c.id), clock);
    for (let i = 0; i < 3; i++) expect((await submitDirectly(w, c.id, third)).kind).toBe("accepted");
    // 900,000 bytes wait; 100,001 more would pass the bound, 100,000 fit exactly.
    expect((await submitDirectly(w, c.id, "x".repeat(100_001))).kind).toBe("queue_full");
    expect((await submitDirectly(w, c.id, "x".repeat(100_000))).kind).toBe("accepted");
    expect((await submitDirectly(w, c.id, "x")).kind).toBe("queue_full");
    // With no credits left, the entries fail and leave room, though they stay in the queue as failed.
    await settle(room(c.id), clock);
    expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(["failed", "failed", "failed", "failed"]);
    for (let i = 0; i < 3; i++) expect((await submitDirectly(w, c.id, third)).kind).toBe("accepted");
  });

  it("checks the reply target, then the key, then the archive state, then the bound", async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock);
    const cancelledKey = crypto.randomUUID();
    const cancelled = await send(w, chat.id, "to cancel", cancelledKey);
    expect((await cancel(w, chat.id, cancelled.json.submissionId)).status).toBe(204);
    for (let i = 0; i < QUEUE_MAX_ENTRIES; i++) await submitDirectly(w, chat.id, `m${i}`);
    expectProblem(await send(w, chat.id, "to cancel", cancelledKey), 409, "submission_cancelled");
    expectProblem(await send(w, chat.id, "another body", cancelledKey), 409, "idempotency_key_reused");
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await send(w, chat.id, "archived and full"), 409, "chat_archived");
    // An unknown reply target is input: 400 before the key and the archive state are looked at.
    expectProblem(await send(w, chat.id, "to cancel", cancelledKey, { replyToMessageId: crypto.randomUUID() }), 400, "invalid_request");
  });
});
