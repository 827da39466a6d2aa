import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";

export type PageEnv = AppEnv & { Variables: AppEnv["Variables"] & { cspNonce: string } };

/** A page's own Content-Security-Policy directives, given the nonce its inline style or script carries. */
export type PagePolicy = (nonce: string) => string;

// Added to every page's policy: no other site may frame it, no <base> may move its links, no plugins.
const EVERY_PAGE = "base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

/**
 * A server-rendered page with one inline style and nothing else: no scripts, nothing from another origin.
 * formAction null leaves form targets open: a consent form's answer redirects to the client, which
 * `form-action 'self'` would block.
 */
export const plainPagePolicy =
  (formAction: "'self'" | "'none'" | null): PagePolicy =>
  (nonce) =>
    `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'${formAction ? `; form-action ${formAction}` : ""}`;

const nonceOf = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));

/**
 * Every HTML page goes through this: its own policy with `frame-ancestors
 * 'none'` (a page where a token is pasted or a grant approved must not be framed by another site),
 * `nosniff`, and no Referer, since page URLs can carry an authorization request. The policy's nonce
 * is fresh per response and in `c.get("cspNonce")` for the page's inline style or script.
 */
export const pageSecurity = (policy: PagePolicy) =>
  createMiddleware<PageEnv>(async (c, next) => {
    const nonce = nonceOf();
    c.set("cspNonce", nonce);
    await next();
    c.res.headers.set("content-security-policy", `${policy(nonce)}; ${EVERY_PAGE}`);
    c.res.headers.set("x-content-type-options", "nosniff");
    c.res.headers.set("referrer-policy", "no-referrer");
  });
