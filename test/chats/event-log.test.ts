import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { splitText } from "../../src/chats/room/event-log";
import { runNextAlarm } from "../clock";
import { chatsPath, room, send } from "../helpers";
import { openEvents } from "../sse";
import { it } from "../fixtures/chat";

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

  it("keeps an event stored in parts whole, live and on a resume read from storage after a restart", async ({ clock, w, chat }) => {
    const path = `${chatsPath(w)}/${chat.id}/events`;
    const live = await openEvents(path, w.token);
    const snapshot = await live.next();
    const content = "\u0001".repeat(100_000); // six characters each in JSON: 600,000, so the event is stored in three parts
    expect((await send(w, chat.id, content)).status).toBe(202);
    await runNextAlarm(room(chat.id), clock);
    const message = await live.until((e) => e.type === "message" && e.data.role === "user", 10_000);
    expect(message.data.content).toBe(content);
    const parts = await runInDurableObject(
      room(chat.id),
      (_: unknown, state) => state.storage.sql.exec<{ parts: number }>("SELECT parts FROM events WHERE id = ?", message.id).one().parts,
    );
    expect(parts).toBeGreaterThan(1);
    await live.close();
    // A restart empties the object's memory of recent events: this resume reads every part back from storage.
    await abortAllDurableObjects();
    const resumed = await openEvents(`${path}?after=${snapshot.id}`, w.token);
    const again = await resumed.until((e) => e.id === message.id, 10_000);
    expect(again.data).toEqual(message.data);
    await resumed.close();
  }, 30_000);
});
