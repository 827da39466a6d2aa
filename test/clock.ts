import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { vi } from "vitest";

export type Clock = { now(): number; advance(ms: number): number; set(ms: number): void };

/**
 * Stops Date.now an hour ahead of real time, for the test and the Durable Objects alike (one
 * isolate). Every alarm an object sets is then an hour away in real time and never fires by
 * itself: the test moves the clock and runs the alarm. restoreMocks (vitest.config.ts) restores it before the next test.
 */
export function frozenClock(): Clock {
  let now = Date.now() + 3_600_000;
  vi.spyOn(Date, "now").mockImplementation(() => now);
  return {
    now: () => now,
    advance: (ms) => (now += ms),
    // Only forward: an alarm behind real time would fire on its own.
    set: (ms) => {
      now = Math.max(now, ms);
    },
  };
}

/** The time of the object's alarm, or null when none is set. */
export const alarmOf = (stub: DurableObjectStub) => runInDurableObject(stub, (_: unknown, state) => state.storage.getAlarm());

/**
 * Moves the clock just past the object's alarm and runs it; false when no alarm was set (or none by `until`).
 * Just past: alarms keep whole milliseconds, so one set for 12.5 ms is stored as 12 and would find itself early.
 */
export async function runNextAlarm(stub: DurableObjectStub, clock: Clock, until = Number.POSITIVE_INFINITY): Promise<boolean> {
  const at = await alarmOf(stub);
  if (at === null || at > until) return false;
  clock.set(at + 1);
  return runDurableObjectAlarm(stub);
}

/**
 * Runs the object's alarms, each at its time, until none is due within an hour of where it started
 * (tasks, retries and holds are; a failed entry leaving the queue after 24 hours is not); returns how many ran.
 */
export async function settle(stub: DurableObjectStub, clock: Clock, most = 100, horizonMs = 3_600_000): Promise<number> {
  const until = clock.now() + horizonMs;
  // One read of the alarm per run: a background hand-off may move it (to a question's expiry, days ahead) between two reads.
  for (let ran = 0; ran < most; ran++) if (!(await runNextAlarm(stub, clock, until))) return ran;
  throw new Error(`the object still had an alarm after ${most} runs`);
}
