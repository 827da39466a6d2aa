import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { secretsEqual, toBase64Url } from "../crypto";
import type { AppEnv } from "../env";
import { pageCookie, type PageSession } from "./session";

const encoder = new TextEncoder();

/**
 * The CSRF token of a form a signed-in page shows: an HMAC of what the form does, keyed by the
 * session's secret, which only this browser's cookie holds. Another account's session, another
 * session of the same account, or another purpose (another authorization request, another row)
 * gives another token.
 */
export async function formToken(session: PageSession, purpose: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(session.secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(purpose))));
}

/** Whether a posted token is this session's for this purpose (compared in constant time). */
export async function formTokenValid(session: PageSession, purpose: string, posted: unknown): Promise<boolean> {
  return typeof posted === "string" && posted !== "" && secretsEqual(posted, await formToken(session, purpose));
}

/**
 * Before there is a session (the sign-in form), a random token in a cookie of its own that the form
 * repeats: a page of another site can make the browser post, but cannot read the cookie to repeat it.
 */
export function signInFormToken<E extends AppEnv>(c: Context<E>): string {
  const { name, options } = pageCookie(c, "signInCsrf");
  const existing = getCookie(c, name);
  if (existing && /^[A-Za-z0-9_-]{22,64}$/.test(existing)) return existing;
  const token = toBase64Url(crypto.getRandomValues(new Uint8Array(24)));
  setCookie(c, name, token, options);
  return token;
}

export async function signInFormTokenValid<E extends AppEnv>(c: Context<E>, posted: unknown): Promise<boolean> {
  const cookie = getCookie(c, pageCookie(c, "signInCsrf").name);
  return typeof posted === "string" && !!cookie && secretsEqual(posted, cookie);
}
