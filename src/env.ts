/** Bindings and vars, as declared in wrangler.toml (secrets come from `wrangler secret put` or .dev.vars). */
import type { TokenGate } from "./auth/token-gate";
import type { SignInThrottle } from "./auth/sign-in-throttle";
import type { ChatRoom } from "./chats/chat-room";

export interface Env {
  DB: D1Database;
  TOKEN_GATE: DurableObjectNamespace<TokenGate>;
  CHAT_ROOM: DurableObjectNamespace<ChatRoom>;
  // Static assets (wrangler.toml [assets]): the pinned API reference bundle.
  ASSETS: Fetcher;
  SIGN_IN_THROTTLE: DurableObjectNamespace<SignInThrottle>;
  ADMIN_TOKEN?: string;
  APP_ORIGIN?: string;
  APP_ORIGINS?: string;
  PUBLIC_URL?: string;
  RATE_LIMIT_PER_MINUTE?: string;
  AGENT_MODE?: string;
  AGENT_URL?: string;
  AGENT_SECRET?: string;
  AGENT_TIMEOUT_SECONDS?: string;
  LOCAL_AGENT_DELAY_MS?: string;
  TASK_CREDIT_COST?: string;
  CATALOG_CACHE_SECONDS?: string;
}

export type AppEnv = { Bindings: Env; Variables: { requestId: string } };

/** Reads a numeric var, falling back to the documented default when unset or not a number. */
export function numberVar(value: string | undefined, fallback: number): number {
  const parsed = value === undefined || value.trim() === "" ? NaN : Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
}
