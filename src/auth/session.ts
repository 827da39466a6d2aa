import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { config } from "../config";
import type { AppEnv } from "../env";
import { unauthorized } from "../http/problem";
import { findSessionAccount } from "./accounts";
import { API_TOKEN_PREFIX, SESSION_PREFIX, bearerToken, hashSecret, isWellFormedSecret } from "./secrets";

export type SessionEnv = AppEnv & { Variables: AppEnv["Variables"] & { accountId: string; sessionHash: string } };
export const SESSION_COOKIE = "session";

/**
 * The session cookie's attributes, for setting and for clearing it. `Partitioned` (CHIPS) keeps it
 * working where the web application and the API are different sites (localhost:5173 calling
 * 127.0.0.1:8787 in dev), which browsers that block third-party cookies would otherwise refuse.
 */
export const SESSION_COOKIE_OPTIONS = { path: "/auth", httpOnly: true, secure: true, sameSite: "None", partitioned: true } as const;

/** Whether the request comes from a web-application origin whose session cookie is honoured (APP_ORIGINS). */
export const isAppOrigin = (env: AppEnv["Bindings"], origin: string | undefined): origin is string => origin !== undefined && config(env).appOrigins.includes(origin);

export const invalidSession = (detail: string) => unauthorized("account", detail);
// The OpenAPI security of every operation behind requireSession.
export const sessionSecurity = [{ accountSessionBearer: [] }];

/**
 * Token management needs an account session: a pcs_ bearer, or the session cookie when the
 * request comes from an allowed web-application origin (which also rules out cross-site forgery).
 */
export const requireSession = createMiddleware<SessionEnv>(async (c, next) => {
  const bearer = bearerToken(c.req.header("authorization"));
  const origin = c.req.header("origin");
  const cookie = !bearer && isAppOrigin(c.env, origin) ? getCookie(c, SESSION_COOKIE) : undefined;
  const secret = bearer ?? cookie;
  // Each answer names the call, since the same guard stands before tokens, credits and signing out.
  const call = `${c.req.method} ${c.req.path}`;
  if (!secret) throw invalidSession(`${call} needs an account session: sign in with POST /auth/token and send its token as Authorization: Bearer pcs_….`);
  if (!isWellFormedSecret(secret, SESSION_PREFIX)) {
    throw invalidSession(
      secret.startsWith(API_TOKEN_PREFIX)
        ? `${call} needs an account session (pcs_…, from POST /auth/token), not a personal API token: those are for /v1 and /mcp.`
        : `${call} needs an account session (pcs_…, from POST /auth/token); this bearer is not one.`,
    );
  }
  const sessionHash = await hashSecret(secret);
  const accountId = await findSessionAccount(c.env.DB, sessionHash, Date.now());
  if (!accountId) throw invalidSession("The session is invalid, has ended or has expired; sign in again.");
  c.set("accountId", accountId);
  c.set("sessionHash", sessionHash);
  await next();
});

/** Credentialed CORS on /auth/* for exactly the APP_ORIGINS origins; other origins get no CORS headers. */
export const accountCors = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header("origin");
  const allowed = isAppOrigin(c.env, origin);
  if (allowed && c.req.method === "OPTIONS") {
    return c.body(null, 204, {
      "access-control-allow-origin": origin,
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
      "access-control-allow-headers": c.req.header("access-control-request-headers") ?? "authorization, content-type",
      "access-control-max-age": "600",
      vary: "Origin",
    });
  }
  await next();
  c.res.headers.append("vary", "Origin");
  if (allowed) {
    c.res.headers.set("access-control-allow-origin", origin);
    c.res.headers.set("access-control-allow-credentials", "true");
    // Browsers hide response headers from scripts unless they are listed here.
    c.res.headers.set("access-control-expose-headers", "retry-after, x-request-id");
  }
});
