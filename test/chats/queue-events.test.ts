import { runInDurableObject } from "cloudflare:test";
import { describe, expect, vi } from "vitest";
import { FAILED_KEPT_BYTES, FAILED_KEPT_ENTRIES, SubmissionStorage } from "../../src/chats/room/submission-storage";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { admin, chatsPath, newChat, queueOf, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { cancel, followerQueue, steer, stop, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";

/** What the chat's log stores: the bytes of every kept event's data, parts included. */
const storedBytes = (chatId: string) =>
  runInDurableObject(room(chatId), (_: unknown, state) => {
    const sum = (table: string) => state.storage.sql.exec<{ n: number | null }>(`SELECT SUM(length(CAST(data AS BLOB))) AS n FROM ${table}`).one().n ?? 0;
    return sum("events") + sum("event_parts");
  });

describe("queue changes as entry events", () => {
  it("follow an entry through its life, and the follower's queue is always the queue", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 2 });
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    const check = async () => {
      const want = (await queueOf(w, c.id)).items;
      await s.received(() => JSON.stringify(followerQueue(s.events)) === JSON.stringify(want));
    };
    const a = (await send(w, c.id, "a")).json.submissionId;
    const b = (await send(w, c.id, "b")).json.submissionId;
    await check();
    await runNextAlarm(room(c.id), clock); // a starts: it leaves the queue
    await check();
    const st = (await steer(w, c.id, "steer")).json.submissionId;
    await check();
    await stop(w, c.id, (await workingReply(w, c.id)).id); // the steer goes back to the queue as queued
    await check();
    const x = (await send(w, c.id, "x")).json.submissionId;
    expect((await cancel(w, c.id, x)).status).toBe(204);
    await check();
    await settle(room(c.id), clock); // b runs, the steer fails for want of credits
    await check();
    const kinds = s.events.filter((e) => e.type.startsWith("queue")).map((e) => [e.type, e.data.id, e.data.status]);
    expect(kinds).toEqual([
      ["queue.entry", a, "dispatching"],
      ["queue.entry", b, "queued"],
      ["queue.removed", a, undefined],
      ["queue.entry", st, "steering"],
      ["queue.entry", st, "queued"],
      ["queue.entry", x, "queued"],
      ["queue.removed", x, undefined],
      ["queue.entry", b, "dispatching"],
      ["queue.removed", b, undefined],
      ["queue.entry", st, "dispatching"],
      ["queue.entry", st, "failed"],
    ]);
    expect(s.events.some((e) => e.type === "queue")).toBe(false);
    await s.close();
  });

  it("store and send what a chat is sent, linearly: a full queue of long messages costs each at most 4x what was sent", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    const before = await storedBytes(chat.id);
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).status).toBe(200);
    const size = 9_000;
    let sent = 0;
    try {
      for (let i = 0; i < 100; i++) {
        if (i > 0 && i % 50 === 0) clock.advance(60_001); // the token's next minute
        const content = `${i} ${"x".repeat(size)}`;
        expect((await send(w, chat.id, content)).status).toBe(202);
        sent += content.length;
      }
    } finally {
      await admin("PUT", "/admin/maintenance", { enabled: false });
    }
    clock.advance(60_000);
    await settle(room(chat.id), clock, 1_000);
    await s.received(() => followerQueue(s.events).length === 0 && s.events.filter((e) => e.type === "queue.removed").length === 100);
    const stored = (await storedBytes(chat.id)) - before;
    const followed = s.events.slice(1).reduce((n, e) => n + new TextEncoder().encode(JSON.stringify(e.data)).byteLength, 0);
    expect(stored / sent).toBeLessThanOrEqual(4);
    expect(followed / sent).toBeLessThanOrEqual(4);
    await s.close();
  }, 30_000);
});

describe("failed entries in the queue", () => {
  it(`keep the newest ${FAILED_KEPT_ENTRIES}: an older one leaves early, and followers hear it`, async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const ids: string[] = [];
    for (let i = 0; i <= FAILED_KEPT_ENTRIES; i++) {
      if (i > 0 && i % 50 === 0) clock.advance(60_001);
      ids.push((await send(w, c.id, `f${i}`)).json.submissionId);
      await settle(room(c.id), clock);
    }
    const queue = (await queueOf(w, c.id)).items;
    expect(queue).toHaveLength(FAILED_KEPT_ENTRIES);
    expect(queue[0]!.id).toBe(ids[1]);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events?after=0`, w.token);
    await s.until((e) => e.type === "queue.removed" && e.data.id === ids[0]);
    await s.close();
  }, 30_000);

  it(`keep at most ${FAILED_KEPT_BYTES} bytes of them, newest first`, async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    for (let i = 0; i < 4; i++) {
      await send(w, c.id, `${i}${"€".repeat(99_990)}`); // about 300,000 bytes
      await settle(room(c.id), clock);
    }
    expect((await queueOf(w, c.id)).items.map((e) => e.content[0])).toEqual(["1", "2", "3"]);
  });

  it("are read through their own index: the failures that left the queue long ago are not read again", async ({ chat }) => {
    const read = await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const sql = state.storage.sql;
      const past = Date.now() - 3 * 86_400_000;
      const left =
        "INSERT INTO submissions (id, idempotency_key, content, disposition, status, created_at, failed_at, left_queue_at) VALUES (?, ?, 'x', 'queued', 'failed', ?, ?, ?)";
      for (let i = 0; i < 2_000; i++) sql.exec(left, crypto.randomUUID(), crypto.randomUUID(), new Date(past).toISOString(), past, past + 86_400_000);
      // The chat's submissions as its object reads them after a restart (nothing in memory yet).
      const submissions = new SubmissionStorage(sql);
      const exec = sql.exec.bind(sql);
      const cursors: { rowsRead: number }[] = [];
      vi.spyOn(sql, "exec").mockImplementation((query: string, ...bindings: unknown[]) => {
        const cursor = exec(query, ...bindings);
        cursors.push(cursor);
        return cursor;
      });
      submissions.queue(Date.now());
      submissions.expireFailed(Date.now());
      return cursors.reduce((n, cursor) => n + cursor.rowsRead, 0);
    });
    expect(read).toBeLessThan(100);
  });
});
