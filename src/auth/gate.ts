import { createMiddleware } from "hono/factory";
import type { AppEnv, Env } from "../env";
import { ApiError, unauthorized } from "../http/problem";
import type { Scope } from "./scopes";
import { API_TOKEN_PREFIX, SESSION_PREFIX, bearerToken, hashSecret, isWellFormedSecret } from "./secrets";

export type ApiCaller = { accountId: string; scopes: Scope[]; tokenHash: string };
export type GatedEnv = AppEnv & { Variables: AppEnv["Variables"] & { caller: ApiCaller } };

// Bindings of requests the Worker sends to its own app for a caller the gate already admitted (an MCP tool calling its /v1 route).
const admittedWith = new WeakMap<Env, ApiCaller>();

/**
 * Bindings under which the gate takes the caller as admitted: it neither checks nor counts again, so
 * one HTTP request counts once. No client can present them: they exist only inside this isolate.
 */
export function bindingsAdmitting(env: Env, caller: ApiCaller): Env {
  const inner = Object.create(env) as Env;
  admittedWith.set(inner, caller);
  return inner;
}

const POLICY = "per-token";

const invalidToken = (detail: string) => unauthorized("api", detail);

/**
 * The gate in front of /v1/projects/*: a personal API token from the Authorization header (never
 * the query string), checksum-checked before any lookup, then one round trip to its TokenGate
 * object, which answers 401 or 429 or admits and counts the request.
 */
export const tokenGate = createMiddleware<GatedEnv>(async (c, next) => {
  if (c.req.method === "OPTIONS") return next();
  const admitted = admittedWith.get(c.env);
  if (admitted) {
    c.set("caller", admitted);
    return next();
  }
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw invalidToken("This call needs a personal API token: send it as Authorization: Bearer pct_… (POST /auth/api-tokens creates one).");
  if (!isWellFormedSecret(token, API_TOKEN_PREFIX)) {
    throw invalidToken(
      token.startsWith(SESSION_PREFIX)
        ? "This call needs a personal API token (pct_…), not an account session: create one with POST /auth/api-tokens, signed in with this session."
        : "The API token is not valid: a personal API token starts with pct_ and is sent whole.",
    );
  }
  const tokenHash = await hashSecret(token);
  const verdict = await c.env.TOKEN_GATE.getByName(tokenHash).admit(tokenHash);
  if (verdict.kind === "invalid") throw invalidToken("The API token is invalid, expired or revoked.");
  const policy = `"${POLICY}";q=${verdict.limit};w=60`;
  if (verdict.kind === "limited") {
    throw new ApiError(429, "rate_limited", `This token may make ${verdict.limit} requests a minute; try again in ${verdict.retryAfterSeconds} s.`, {
      headers: { "retry-after": String(verdict.retryAfterSeconds), "ratelimit-policy": policy, ratelimit: `"${POLICY}";r=0;t=${verdict.retryAfterSeconds}` },
    });
  }
  c.set("caller", { accountId: verdict.accountId, scopes: verdict.scopes, tokenHash });
  await next();
  c.res.headers.set("ratelimit-policy", policy);
  c.res.headers.set("ratelimit", `"${POLICY}";r=${verdict.remaining};t=${verdict.resetSeconds}`);
});

/** 403 unless the admitted token carries the scope (RFC 6750 insufficient_scope names it). */
export const requireScope = (scope: Scope) =>
  createMiddleware<GatedEnv>(async (c, next) => {
    if (!c.get("caller").scopes.includes(scope)) {
      throw new ApiError(403, "insufficient_scope", `This operation needs a token with the ${scope} scope.`, {
        headers: { "www-authenticate": `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
      });
    }
    await next();
  });
