import { describe, expect, vi } from "vitest";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { MAINTENANCE_LEASE_MS, MaintenanceSwitch, maintenanceSwitch } from "../../src/chats/maintenance";
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

  it("lets chats dispatch on the switch's word that it is off for a lease, and turns on only once every lease ran out", async ({ clock, w, chat }) => {
    // No lease left from earlier tests in this isolate.
    await maintenanceSwitch(env).set(false);
    const asked = vi.spyOn(MaintenanceSwitch.prototype, "holds");
    // The task and its steps, not the chat list's sync 2 s later: the clock stays within the lease.
    const withinTheLease = () => settle(room(chat.id), clock, 100, MAINTENANCE_LEASE_MS / 4);
    await send(w, chat.id, "asks the switch");
    await withinTheLease();
    expect(asked).toHaveBeenCalledTimes(1);
    // Within the lease a dispatch asks nothing; past it, the switch again.
    await send(w, chat.id, "on the lease");
    await withinTheLease();
    expect(replies(await historyOf(w, chat.id))).toHaveLength(2);
    expect(asked).toHaveBeenCalledTimes(1);
    clock.advance(MAINTENANCE_LEASE_MS);
    await send(w, chat.id, "after the lease");
    await withinTheLease();
    expect(asked).toHaveBeenCalledTimes(2);
    // Turning it on waits out the lease it just gave (the clock here stands still, so the switch counts the whole lease).
    const waited = vi.spyOn(scheduler, "wait");
    await maintenanceSwitch(env).set(true);
    try {
      expect(waited).toHaveBeenCalledTimes(1);
      expect(waited.mock.calls[0]![0]).toBeGreaterThan(MAINTENANCE_LEASE_MS / 2);
      expect(waited.mock.calls[0]![0]).toBeLessThanOrEqual(MAINTENANCE_LEASE_MS);
      await send(w, chat.id, "held");
      await runNextAlarm(room(chat.id), clock);
      expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([["held", "queued"]]);
      expect(asked).toHaveBeenCalledTimes(3);
    } finally {
      await maintenanceSwitch(env).set(false);
    }
    // Turning it off waits for nothing.
    expect(waited).toHaveBeenCalledTimes(1);
    await settle(room(chat.id), clock);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(4);
  });

  it("ends as the last call left it when it is turned off while turning on waits out a lease", async ({ clock, w, chat }) => {
    await maintenanceSwitch(env).set(false);
    await send(w, chat.id, "takes a lease");
    await settle(room(chat.id), clock);
    const turningOn = admin("PUT", "/admin/maintenance", { enabled: true });
    expect((await admin("PUT", "/admin/maintenance", { enabled: false })).json).toEqual({ enabled: false });
    // The call that waited answers the state as it left it.
    expect((await turningOn).json).toEqual({ enabled: false });
    // Both the switch and the flag that sends read say off: a send starts and runs.
    expect(await maintenanceSwitch(env).holds()).toBe(false);
    expect((await send(w, chat.id, "runs")).json.disposition).toBe("started");
    await settle(room(chat.id), clock);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(2);
  });
});
