import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv, Env } from "../env";
import { ApiError, unauthorized } from "../http/problem";
import { timed } from "../http/server-timing";
import type { Scope } from "./scopes";
import { API_TOKEN_PREFIX, SESSION_PREFIX, bearerToken, hashSecret, isWellFormedSecret } from "./secrets";

/**
 * Who a request acts for; gateName names the TokenGate that admitted it (a personal token's hash, or an OAuth grant's
 * `grant:<id>`), where its streams and its credits are counted; atCreditLimit: its tasks had spent its credit limit when it was admitted.
 */
export type ApiCaller = { accountId: string; scopes: Scope[]; gateName: string; atCreditLimit: boolean };
export type GatedEnv = AppEnv & { Variables: AppEnv["Variables"] & { caller: ApiCaller } };

const POLICY = "per-token";

const invalidToken = (detail: string) => unauthorized("api", detail);

/** An admitted request: who it acts for, and the RateLimit headers its answer carries. */
export type Admission = { accountId: string; scopes: Scope[]; atCreditLimit: boolean; headers: Record<string, string> };

/**
 * One request through the TokenGate of that name (a personal token's hash, or an OAuth grant's
 * `grant:<id>`): one round trip answers 401 for a credential it does not know or that was revoked
 * or has expired, 429 past the per-minute limit, or admits and counts the request.
 */
export async function admitAt(env: Env, gateName: string, invalidDetail: string, accessHash?: string): Promise<Admission> {
  const verdict = await env.TOKEN_GATE.getByName(gateName).admit(gateName, accessHash);
  if (verdict.kind === "invalid") throw invalidToken(invalidDetail);
  const policy = `"${POLICY}";q=${verdict.limit};w=60`;
  if (verdict.kind === "limited") {
    throw new ApiError(429, "rate_limited", `This token may make ${verdict.limit} requests a minute; try again in ${verdict.retryAfterSeconds} s.`, {
      headers: { "retry-after": String(verdict.retryAfterSeconds), "ratelimit-policy": policy, ratelimit: `"${POLICY}";r=0;t=${verdict.retryAfterSeconds}` },
    });
  }
  return {
    accountId: verdict.accountId,
    scopes: verdict.scopes,
    atCreditLimit: verdict.atCreditLimit,
    headers: { "ratelimit-policy": policy, ratelimit: `"${POLICY}";r=${verdict.remaining};t=${verdict.resetSeconds}` },
  };
}

/** Runs the rest of the request as the admitted caller and puts the RateLimit headers on its answer. */
export async function proceedAs(c: Context<GatedEnv>, caller: ApiCaller, headers: Record<string, string>, next: Next): Promise<void> {
  c.set("caller", caller);
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
}

/**
 * A personal API token from the Authorization header (never the query string), checksum-checked
 * before any lookup, then admitted by its TokenGate object.
 */
export async function admitPersonalToken(env: Env, token: string | undefined): Promise<{ caller: ApiCaller; headers: Record<string, string> }> {
  if (!token) throw invalidToken("This call needs a personal API token: send it as Authorization: Bearer pct_… (POST /auth/api-tokens creates one).");
  if (!isWellFormedSecret(token, API_TOKEN_PREFIX)) {
    throw invalidToken(
      token.startsWith(SESSION_PREFIX)
        ? "This call needs a personal API token (pct_…), not an account session: create one with POST /auth/api-tokens, signed in with this session."
        : "The API token is not valid: a personal API token starts with pct_ and is sent whole.",
    );
  }
  const tokenHash = await hashSecret(token);
  const { accountId, scopes, atCreditLimit, headers } = await admitAt(env, tokenHash, "The API token is invalid, expired or revoked.");
  return { caller: { accountId, scopes, gateName: tokenHash, atCreditLimit }, headers };
}

/** In front of /v1/projects/*: a personal API token, admitted by its TokenGate (OAuth access tokens are not accepted here). */
export const requirePersonalToken = createMiddleware<GatedEnv>(async (c, next) => {
  if (c.req.method === "OPTIONS") return next();
  const { caller, headers } = await timed(c, "gate", () => admitPersonalToken(c.env, bearerToken(c.req.header("authorization"))));
  await proceedAs(c, caller, headers, next);
});

/** 403 unless the admitted caller's token carries the scope (RFC 6750 insufficient_scope names it). */
export function checkScope(caller: ApiCaller, scope: Scope): void {
  if (!caller.scopes.includes(scope)) {
    throw new ApiError(403, "insufficient_scope", `This operation needs a token with the ${scope} scope.`, {
      headers: { "www-authenticate": `Bearer realm="api", error="insufficient_scope", scope="${scope}"` },
    });
  }
}

/** The scope check in front of a route. */
export const requireScope = (scope: Scope) =>
  createMiddleware<GatedEnv>(async (c, next) => {
    checkScope(c.get("caller"), scope);
    await next();
  });
