import { describe, expect, it, vi } from "vitest";
import { DatabaseUnavailable } from "../../src/db/errors";
import { ReadMostly } from "../../src/db/read-mostly";
import { frozenClock } from "../clock";
import { OUTAGE } from "../d1-calls";

const FRESH = 1_000;
const STALE = 10_000;
const outage = () => Promise.reject(new Error(OUTAGE));

describe("ReadMostly", () => {
  it("reuses a value while fresh, reads again after, and never hands one caller another's pending read", async () => {
    const clock = frozenClock();
    const cache = new ReadMostly<number>("test", { freshMs: FRESH, staleMs: STALE });
    const read = vi.fn(async () => read.mock.calls.length);
    // Concurrent callers are different requests: each reads, so none continues on behalf of another.
    const [a, b] = await Promise.all([cache.get("k", read), cache.get("k", read)]);
    expect([a.value, b.value, read.mock.calls.length]).toEqual([1, 2, 2]);
    clock.advance(FRESH - 1);
    expect((await cache.get("k", read)).value, "reads that started at the same moment: the first kept").toBe(1);
    clock.advance(1);
    expect((await cache.get("k", read)).value).toBe(3);
  });

  it("serves the last value while D1 is unavailable, then refuses with DatabaseUnavailable once it is too old", async () => {
    const clock = frozenClock();
    const cache = new ReadMostly<string>("test", { freshMs: FRESH, staleMs: STALE });
    const seen = await cache.get("k", async () => "read");
    vi.spyOn(console, "warn").mockImplementation(() => {});
    clock.advance(STALE - 1);
    expect(await cache.get("k", outage)).toEqual(seen);
    clock.advance(1);
    await expect(cache.get("k", outage)).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it("waits freshMs before asking a failing D1 again", async () => {
    const clock = frozenClock();
    const cache = new ReadMostly<string>("test", { freshMs: FRESH, staleMs: STALE });
    await cache.get("k", async () => "read");
    vi.spyOn(console, "warn").mockImplementation(() => {});
    clock.advance(FRESH);
    const failing = vi.fn(outage);
    await cache.get("k", failing);
    clock.advance(FRESH - 1);
    await cache.get("k", failing);
    expect(failing).toHaveBeenCalledTimes(1);
    clock.advance(1);
    await cache.get("k", failing);
    expect(failing).toHaveBeenCalledTimes(2);
  });

  it("lets other errors through: a mistake in a query is not an outage", async () => {
    frozenClock();
    const cache = new ReadMostly<string>("test", { freshMs: FRESH, staleMs: STALE });
    await expect(cache.get("k", () => Promise.reject(new Error("D1_ERROR: no such table: nope")))).rejects.toThrow("no such table");
  });

  it("takes an offered value only when it is newer than the one held, and forgets on request", async () => {
    const clock = frozenClock();
    const cache = new ReadMostly<string>("test", { freshMs: FRESH, staleMs: STALE });
    const read = vi.fn(async () => "read");
    await cache.get("k", read);
    cache.offer("k", { value: "older", at: clock.now() - 1 });
    expect((await cache.get("k", read)).value).toBe("read");
    cache.offer("k", { value: "newer", at: clock.now() + 1 });
    expect((await cache.get("k", read)).value).toBe("newer");
    cache.forget("k");
    expect((await cache.get("k", read)).value).toBe("read");
    expect(read).toHaveBeenCalledTimes(2);
  });

  it("does not keep a value whose read began before a forget: the change made here is not undone by it", async () => {
    frozenClock();
    const cache = new ReadMostly<string>("test", { freshMs: FRESH, staleMs: STALE });
    let finish!: (value: string) => void;
    const before = cache.get("k", () => new Promise<string>((resolve) => (finish = resolve)));
    cache.forget();
    finish("before the change");
    expect((await before).value, "its caller still gets what it read").toBe("before the change");
    expect((await cache.get("k", async () => "after the change")).value).toBe("after the change");
  });
});
