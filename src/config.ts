import type { Env } from "./env";

/** Every var the Worker reads, parsed once with its documented default (README "Vars"). */
export type Config = {
  adminToken: string | undefined;
  /** The web application's address: root-relative banner links resolve against it. */
  appOrigin: string;
  /** Origins whose session cookie is honoured on /auth/*. */
  appOrigins: string[];
  /** The Worker's public origin (PUBLIC_URL), where an http agent calls back; never taken from a request. */
  publicOrigin: string | undefined;
  rateLimitPerMinute: number;
  agent: { mode: "local"; delayMs: number } | { mode: "http"; url: string | undefined; secret: string | undefined; timeoutMs: number };
  taskCreditCost: number;
  catalogCacheSeconds: number;
};

const DEFAULT_APP_ORIGIN = "http://localhost:5173";
const parsed = new WeakMap<Env, Config>();

/** The configuration of this environment; env is the same object for every request of an isolate, so this parses once. */
export function config(env: Env): Config {
  let value = parsed.get(env);
  if (!value) parsed.set(env, (value = parse(env)));
  return value;
}

function parse(env: Env): Config {
  const appOrigin = originOf(env.APP_ORIGIN) ?? DEFAULT_APP_ORIGIN;
  return {
    adminToken: env.ADMIN_TOKEN || undefined,
    appOrigin,
    appOrigins: env.APP_ORIGINS
      ? env.APP_ORIGINS.split(",")
          .map((o) => o.trim().replace(/\/$/, ""))
          .filter(Boolean)
      : [appOrigin],
    publicOrigin: originOf(env.PUBLIC_URL),
    rateLimitPerMinute: Math.max(1, Math.floor(count(env.RATE_LIMIT_PER_MINUTE, 60))),
    agent:
      env.AGENT_MODE === "http"
        ? { mode: "http", url: env.AGENT_URL || undefined, secret: env.AGENT_SECRET || undefined, timeoutMs: count(env.AGENT_TIMEOUT_SECONDS, 600) * 1000 }
        : { mode: "local", delayMs: count(env.LOCAL_AGENT_DELAY_MS, 1500) },
    taskCreditCost: Math.floor(count(env.TASK_CREDIT_COST, 1)),
    catalogCacheSeconds: count(env.CATALOG_CACHE_SECONDS, 30),
  };
}

/** A non-negative number, or the default when unset or not a number. */
function count(value: string | undefined, fallback: number): number {
  const n = value === undefined || value.trim() === "" ? NaN : Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** The origin of an http(s) URL, or undefined for anything else. */
function originOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
