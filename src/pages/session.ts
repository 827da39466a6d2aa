import type { Context } from "hono";
import type { AppEnv } from "../env";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { endSession, findSessionAccount } from "../auth/accounts";
import { hashSecret, isWellFormedSecret, SESSION_PREFIX } from "../auth/secrets";

/** The account session behind the service's own pages: whose it is, and its secret, which also keys the pages' CSRF tokens. */
export type PageSession = { accountId: string; secret: string; sessionHash: string };

const isHttps = (c: Context) => new URL(c.req.url).protocol === "https:";

// The session, and the sign-in form's CSRF token before there is one.
const COOKIES = {
  session: { https: "__Host-account", http: "account_session" },
  signInCsrf: { https: "__Host-account-csrf", http: "account_csrf" },
};

/**
 * The pages' own cookie, apart from the web application's `session` and its rules: `__Host-` on https
 * (Secure, this host only, Path=/), a plain name on http, which only loopback development serves and
 * where not every browser keeps Secure cookies. Lax: a connector's authorization request arrives by a
 * top-level link from another site, and must find the person signed in.
 */
export function pageCookie<E extends AppEnv>(c: Context<E>, cookie: keyof typeof COOKIES) {
  const secure = isHttps(c);
  return { name: COOKIES[cookie][secure ? "https" : "http"], options: { path: "/", httpOnly: true, secure, sameSite: "Lax" } as const };
}

/** The signed-in account of this browser, or null (no cookie, or one whose session has ended or expired). */
export async function pageSession<E extends AppEnv>(c: Context<E>): Promise<PageSession | null> {
  const secret = getCookie(c, pageCookie(c, "session").name);
  if (!secret || !isWellFormedSecret(secret, SESSION_PREFIX)) return null;
  const sessionHash = await hashSecret(secret);
  const accountId = await findSessionAccount(c.env.DB, sessionHash, Date.now());
  return accountId ? { accountId, secret, sessionHash } : null;
}

/** Puts a fresh session in the cookie, ending the one it held: signing in never keeps a session someone else may have planted. */
export async function startPageSession<E extends AppEnv>(c: Context<E>, token: string, expiresAt: string): Promise<void> {
  const previous = await pageSession(c);
  if (previous) await endSession(c.env.DB, previous.sessionHash);
  const { name, options } = pageCookie(c, "session");
  setCookie(c, name, token, { ...options, expires: new Date(expiresAt) });
}

/** Signs out: the session ends (tokens and grants stay) and the cookie is cleared. */
export async function endPageSession<E extends AppEnv>(c: Context<E>, session: PageSession): Promise<void> {
  await endSession(c.env.DB, session.sessionHash);
  const { name, options } = pageCookie(c, "session");
  deleteCookie(c, name, options);
}
