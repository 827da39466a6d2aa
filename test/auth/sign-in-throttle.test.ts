import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { SIGN_IN_WINDOW_MS, signInThrottleFor, type SignInThrottle } from "../../src/auth/sign-in-throttle";
import { env } from "../helpers";

const throttle = () => signInThrottleFor(env, `u-${crypto.randomUUID()}@example.test`, "203.0.113.7");
const tables = (stub: DurableObjectStub<SignInThrottle>) =>
  runInDurableObject(stub, (_: SignInThrottle, state) =>
    state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'").toArray(),
  );

describe("SignInThrottle", () => {
  it("reserves exactly 10 of 40 parallel attempts and tells the rest when to retry", async () => {
    const stub = await throttle();
    const answers = await Promise.all(Array.from({ length: 40 }, () => stub.reserve()));
    expect(answers.filter((a) => a.kind === "reserved")).toHaveLength(10);
    const limited = answers.flatMap((a) => (a.kind === "limited" ? [a.retryAfterSeconds] : []));
    expect(limited).toHaveLength(30);
    for (const seconds of limited) {
      expect(seconds).toBeGreaterThan(890);
      expect(seconds).toBeLessThanOrEqual(900);
    }
  });

  it("keeps attempts still being checked counted when another succeeds", async () => {
    const stub = await throttle();
    const slots = [];
    for (let i = 0; i < 10; i++) slots.push(await stub.reserve());
    const ids = slots.map((s) => (s.kind === "reserved" ? s.attempt : -1));
    for (const id of ids.slice(0, 5)) await stub.settle(id, false);
    await stub.settle(ids[5]!, true);
    // Five failures are cleared by the success; the four still in flight keep their slots.
    const next = await Promise.all(Array.from({ length: 10 }, () => stub.reserve()));
    expect(next.filter((a) => a.kind === "reserved")).toHaveLength(6);
  });

  it("frees slots as the 15-minute window moves on, and drops its storage once it is empty", async () => {
    const stub = await throttle();
    const start = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(start);
    for (let i = 0; i < 10; i++) {
      const slot = await stub.reserve();
      if (slot.kind === "reserved") await stub.settle(slot.attempt, false);
    }
    expect((await stub.reserve()).kind).toBe("limited");
    vi.spyOn(Date, "now").mockReturnValue(start + SIGN_IN_WINDOW_MS + 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await tables(stub)).toEqual([]);
    expect((await stub.reserve()).kind).toBe("reserved");
  });
});
