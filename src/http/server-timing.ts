import type { Context, MiddlewareHandler } from "hono";

/** One hop an answer waited on, and for how long (milliseconds). */
type Hop = { name: string; ms: number };

/**
 * Answers carry `Server-Timing`: each hop `timed` measured (the token's gate, the project's membership,
 * the chat's object) and the whole answer (`total`), so a caller sees where its time went.
 */
export const serverTiming: MiddlewareHandler<{ Variables: { hops?: Hop[] } }> = async (c, next) => {
  const started = performance.now();
  const hops: Hop[] = [];
  c.set("hops", hops);
  await next();
  const metrics = [...hops.map((hop) => `${hop.name};dur=${hop.ms.toFixed(1)}`), `total;dur=${(performance.now() - started).toFixed(1)}`];
  c.res.headers.append("server-timing", metrics.join(", "));
};

/** Awaits one hop of an answer and records how long it took (nothing is recorded outside serverTiming). */
export async function timed<R>(c: Context, name: string, work: () => R): Promise<Awaited<R>> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    (c.get("hops") as Hop[] | undefined)?.push({ name, ms: performance.now() - started });
  }
}
