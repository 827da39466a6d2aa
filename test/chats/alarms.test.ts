import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { newChat, peek, room, send, world } from "../helpers";

describe("the chat's alarm", () => {
  it("is set after the moment it ran, though the task's next step falls between two milliseconds", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "four parts in 50 ms: a part every 12.5 ms");
    await runNextAlarm(room(c.id), clock); // the task starts; its first part is due 12.5 ms later
    // Alarms keep whole milliseconds: the runtime fires this one at the millisecond before the part is due.
    const at = (await alarmOf(room(c.id)))!;
    clock.set(at);
    expect(await runDurableObjectAlarm(room(c.id))).toBe(true);
    // Set again for that same millisecond, the alarm would count as the one that just ran, and the chat would stall.
    expect(await alarmOf(room(c.id))).toBeGreaterThan(at);
    await settle(room(c.id), clock);
    expect((await peek(w, c.id))[0]!.status).toBe("success");
  });
});
