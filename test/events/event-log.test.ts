import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ChatRoom } from "../../src/chats/chat-room";
import { splitText } from "../../src/chats/event-log";
import { chatsPath, env, newChat, send, world } from "../helpers";
import { openEvents, type StreamEvent } from "../sse";

describe("the event log", () => {
  it("cuts long data into parts that join back, never inside a surrogate pair", () => {
    const text = "ab😀cd😀😀e".repeat(1000);
    for (const size of [1, 2, 3, 7, 1000]) {
      const parts = splitText(text, size);
      expect(parts.join("")).toBe(text);
      expect(parts.every((p) => p.length <= Math.max(size, 2))).toBe(true);
      expect(parts.every((p) => !/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(p))).toBe(true);
    }
    expect(splitText("", 10)).toEqual([""]);
  });

  it("keeps a queue event larger than a SQLite row, live and on resume", async () => {
    // Entries that failed for want of credits stay 24 hours and are outside the queue bound, so the queue can pass 2 MB.
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const live = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    const snapshot = await live.next();
    const long = "€".repeat(99_990); // three bytes each in UTF-8
    const failed = (n: number) => (e: StreamEvent) => e.type === "queue" && e.data.items.filter((x: { status: string }) => x.status === "failed").length === n;
    for (let i = 0; i < 7; i++) {
      expect((await send(w, c.id, `${i} ${long}`)).status).toBe(202);
      await live.until(failed(i + 1), 10_000);
    }
    const full = await live.until(failed(7), 10_000);
    expect(new TextEncoder().encode(JSON.stringify(full.data)).byteLength).toBeGreaterThan(2 * 1024 * 1024);
    const parts = await runInDurableObject(
      env.CHAT_ROOM.getByName(c.id),
      (_: ChatRoom, state) => state.storage.sql.exec<{ parts: number }>("SELECT parts FROM events WHERE id = ?", full.id).one().parts,
    );
    expect(parts).toBeGreaterThan(1);

    // Memory keeps at most 2 MB of recent events, so this resume reads the parts back from storage.
    const resumed = await openEvents(`${chatsPath(w)}/${c.id}/events?after=${snapshot.id}`, w.token);
    const again = await resumed.until((e) => e.id === full.id, 10_000);
    expect(again.data).toEqual(full.data);
    await Promise.all([live.close(), resumed.close()]);
  }, 30_000);
});
