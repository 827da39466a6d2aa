import { vi } from "vitest";
import { env } from "./helpers";

type D1Call = { sql: string; write: boolean; failed: boolean };
type Options = { failWhen?: (call: { sql: string }, earlier: D1Call[]) => boolean };

const WRITE = /^\s*(insert|update|delete|replace|create|drop|alter)\b/i;
/** What D1 says when it cannot be reached: a transient failure, as in an outage. */
export const OUTAGE = "D1_ERROR: Network connection lost.";

/**
 * Watches every query any code in this isolate sends to D1 (the Worker, the Durable Objects, the
 * test itself), through the binding, its sessions and its batches, and can make them fail as an
 * outage would. The Workers and objects share the isolate, so wrapping the prototypes sees them all.
 */
export function watchD1(options: Options = {}) {
  const calls: D1Call[] = [];
  const db = env.DB as unknown as Record<string, (...args: unknown[]) => unknown>;
  const statementProto = Object.getPrototypeOf(env.DB.prepare("SELECT 1"));
  const sessionProto = Object.getPrototypeOf(env.DB.withSession());
  const databaseProto = Object.getPrototypeOf(db);
  const record = (sql: string) => {
    const failed = options.failWhen?.({ sql }, calls) ?? false;
    calls.push({ sql, write: WRITE.test(sql), failed });
    return failed;
  };
  const wrap = (proto: Record<string, (...args: unknown[]) => unknown>, method: string, sqlOf: (self: any, args: unknown[]) => string[]) => {
    const original = proto[method]!;
    vi.spyOn(proto, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
      const failed = sqlOf(this, args).map(record).some(Boolean);
      if (failed) return Promise.reject(new Error(OUTAGE));
      return original.apply(this, args);
    } as never);
  };
  for (const method of ["first", "run", "all", "raw"]) wrap(statementProto, method, (self) => [self.statement]);
  // D1Database.batch hands its statements to its primary session's batch: counting there counts each once.
  wrap(sessionProto, "batch", (_, args) => (args[0] as { statement: string }[]).map((s) => s.statement));
  wrap(databaseProto, "exec", (_, args) => [args[0] as string]);
  return {
    calls,
    writes: () => calls.filter((c) => c.write),
    /** The tables each call named, for asserting which data was read. */
    tables: () => [...new Set(calls.flatMap((c) => [...c.sql.matchAll(/\b(?:from|join|into|update)\s+["`]?(\w+)/gi)].map((m) => m[1]!)))].sort(),
  };
}

/**
 * Holds the first D1 query whose SQL matches until release() is called, so a test can act while
 * the code that sent it waits (an alarm awaiting D1 lets other calls into its object).
 */
export function holdD1(match: RegExp) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reachedNow!: () => void;
  const reached = new Promise<void>((resolve) => (reachedNow = resolve));
  let holding = false;
  const proto = Object.getPrototypeOf(env.DB.prepare("SELECT 1")) as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ["first", "run", "all", "raw"]) {
    const original = proto[method]!;
    vi.spyOn(proto, method as never).mockImplementation(async function (this: { statement: string }, ...args: unknown[]) {
      if (!holding && match.test(this.statement)) {
        holding = true;
        reachedNow();
        await released;
      }
      return original.apply(this, args);
    } as never);
  }
  return { reached, release };
}
