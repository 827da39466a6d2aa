import type { Context } from "hono";
import { setMetric, type TimingVariables, timing } from "hono/timing";

/**
 * Answers carry `Server-Timing` (Hono's timing middleware): each hop `timed` measured (the token's gate, the project's
 * membership, the chat's object) and the whole answer (`total`), so a caller sees where its time went.
 */
export const serverTiming = timing({ totalDescription: "" });

/**
 * Awaits one hop of an answer and records how long it took (nothing is recorded outside serverTiming). Measured here,
 * not with Hono's named timers, since the same hop may run more than once in an answer, and at once.
 */
export async function timed<R>(c: Context, name: string, work: () => R): Promise<Awaited<R>> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    if ((c.get("metric") as TimingVariables["metric"] | undefined) !== undefined) setMetric(c, name, performance.now() - started);
  }
}
