import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect } from "vitest";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { peek, room, send } from "../helpers";
import { it } from "../fixtures/chat";

describe("the chat's alarm", () => {
  it("is set after the moment it ran, though the task's next step falls between two milliseconds", async ({ clock, w, chat }) => {
    await send(w, chat.id, "four parts in 50 ms: a part every 12.5 ms");
    await runNextAlarm(room(chat.id), clock); // the task starts; its first part is due 12.5 ms later
    // Alarms keep whole milliseconds: the runtime fires this one at the millisecond before the part is due.
    const at = (await alarmOf(room(chat.id)))!;
    clock.set(at);
    expect(await runDurableObjectAlarm(room(chat.id))).toBe(true);
    // Set again for that same millisecond, the alarm would count as the one that just ran, and the chat would stall.
    expect(await alarmOf(room(chat.id))).toBeGreaterThan(at);
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id))[0]!.status).toBe("success");
  });
});
