import { describe, expect } from "vitest";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { maintenanceSwitch } from "../../src/chats/maintenance";
import { admin, creditsOf, env, historyOf, queueOf, replies, room, send } from "../helpers";
import { it } from "../fixtures/chat";

describe("maintenance", () => {
  it("accepts submissions as queued and runs them in order once it ends", async ({ clock, w, chat }) => {
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).json).toEqual({ enabled: true });
    try {
      const first = await send(w, chat.id, "during one");
      const second = await send(w, chat.id, "during two");
      expect([first.json.disposition, second.json.disposition]).toEqual(["queued", "queued"]);
      // The alarm comes, finds maintenance on, and only looks again later.
      expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
      expect(await alarmOf(room(chat.id))).toBeGreaterThan(clock.now());
      expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([
        ["during one", "queued"],
        ["during two", "queued"],
      ]);
      expect((await historyOf(w, chat.id)).items).toEqual([]);
    } finally {
      expect((await admin("PUT", "/admin/maintenance", { enabled: false })).status).toBe(200);
    }
    await settle(room(chat.id), clock);
    const page = await historyOf(w, chat.id);
    expect(replies(page)).toHaveLength(2);
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["during two", "during one"]);
  });
  it("holds every dispatch from the moment it is on, whatever a send's copy of the flag still says", async ({ clock, w, chat }) => {
    // A send whose Worker still held "off" (another instance, within its 2 s): told started, it is being dispatched.
    expect((await send(w, chat.id, "told started")).json.disposition).toBe("started");
    // Maintenance starts (the switch: a send's copy of the flag is not asked again here).
    await maintenanceSwitch(env).set(true);
    try {
      expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
      expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([["told started", "queued"]]);
      expect((await historyOf(w, chat.id)).items).toEqual([]);
      expect(await creditsOf(w.account.id)).toBe(1000);
    } finally {
      await maintenanceSwitch(env).set(false);
    }
    await settle(room(chat.id), clock);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(1);
  });
});
