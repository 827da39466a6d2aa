import { describe, expect, it } from "vitest";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { admin, historyOf, newChat, queueOf, replies, room, send, world } from "../helpers";

describe("maintenance", () => {
  it("accepts submissions as queued and runs them in order once it ends", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).json).toEqual({ enabled: true });
    try {
      const first = await send(w, c.id, "during one");
      const second = await send(w, c.id, "during two");
      expect([first.json.disposition, second.json.disposition]).toEqual(["queued", "queued"]);
      // The alarm comes, finds maintenance on, and only looks again later.
      expect(await runNextAlarm(room(c.id), clock)).toBe(true);
      expect(await alarmOf(room(c.id))).toBeGreaterThan(clock.now());
      expect((await queueOf(w, c.id)).items.map((e) => [e.content, e.status])).toEqual([
        ["during one", "queued"],
        ["during two", "queued"],
      ]);
      expect((await historyOf(w, c.id)).items).toEqual([]);
    } finally {
      expect((await admin("PUT", "/admin/maintenance", { enabled: false })).status).toBe(200);
    }
    await settle(room(c.id), clock);
    const page = await historyOf(w, c.id);
    expect(replies(page)).toHaveLength(2);
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["during two", "during one"]);
  });
});
