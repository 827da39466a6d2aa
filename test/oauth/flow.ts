import { expect } from "vitest";
import { call } from "../helpers";
import { Browser, field, ORIGIN } from "./browser";

export const MCP_RESOURCE = `${ORIGIN}/mcp`;
export const REDIRECT_URI = "https://client.example/callback";

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

/** A PKCE pair (RFC 7636, S256). */
export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** Dynamic registration of a public client (RFC 7591); answers the registration as the server sent it. */
export async function register(metadata: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return call("POST", "/oauth/register", {
    headers,
    body: { client_name: "Test Connector", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", ...metadata },
  });
}

export async function registeredClient(metadata: Record<string, unknown> = {}): Promise<string> {
  const r = await register(metadata);
  expect(r.status, r.text).toBe(201);
  return r.json.client_id as string;
}

/** The authorization request a connector sends the browser to. */
export function authorizePath(clientId: string, challenge: string | null, extra: Record<string, string> = {}) {
  const pkceFields: Record<string, string> = challenge === null ? {} : { code_challenge: challenge, code_challenge_method: "S256" };
  return `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT_URI, state: "state-123", ...pkceFields, ...extra })}`;
}

/** Signs in on the authorization page's form, unless this browser is signed in already; answers the consent screen. */
export async function signInThere(browser: Browser, path: string, account: { email: string; password: string }) {
  const form = await browser.get(path);
  expect(form.status, form.text).toBe(200);
  if (form.text.includes('name="nonce"')) return form;
  const signedIn = await browser.post(path, { step: "sign-in", csrf: field(form.text, "csrf"), email: account.email, password: account.password });
  expect(signedIn.status, signedIn.text).toBe(303);
  expect(signedIn.headers.get("location")).toBe(path);
  return browser.get(path);
}

/** The fields of the consent form on a page, to post back with a decision. */
export const consentForm = (html: string) => ({ step: "consent", nonce: field(html, "nonce"), issued: field(html, "issued"), csrf: field(html, "csrf") });

/** Approves on the consent screen; answers the redirect's query (code, state, iss). */
export async function approve(browser: Browser, path: string, consentPage: string) {
  const answer = await browser.post(path, { ...consentForm(consentPage), decision: "approve" });
  expect(answer.status, answer.text).toBe(303);
  const location = new URL(answer.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
}

/** A form post to the token endpoint, as OAuth clients send it. */
export const tokenRequest = (form: Record<string, string>) =>
  call("POST", "/oauth/token", { raw: new URLSearchParams(form).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

export const exchangeCode = (clientId: string, code: string, verifier: string, resource: string | null = MCP_RESOURCE) =>
  tokenRequest({ grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT_URI, ...(resource === null ? {} : { resource }) });

/** The whole connector flow for an account: register, sign in, approve, exchange; the tokens and who holds them. */
export async function connect(account: { email: string; password: string }, options: { scope?: string; browser?: Browser; resource?: string | null } = {}) {
  // null: the client names no resource, in the authorization request nor at the token endpoint.
  const resource = options.resource === undefined ? MCP_RESOURCE : options.resource;
  const clientId = await registeredClient();
  const { verifier, challenge } = await pkce();
  const browser = options.browser ?? new Browser();
  const path = authorizePath(clientId, challenge, { ...(resource === null ? {} : { resource }), ...(options.scope === undefined ? {} : { scope: options.scope }) });
  const consent = await signInThere(browser, path, account);
  const query = await approve(browser, path, consent.text);
  const tokens = await exchangeCode(clientId, query.get("code")!, verifier, resource);
  expect(tokens.status, tokens.text).toBe(200);
  return { clientId, browser, accessToken: tokens.json.access_token as string, refreshToken: tokens.json.refresh_token as string, tokens: tokens.json };
}

/** A JSON-RPC call to /mcp with a bearer token, as an MCP client sends it. */
export const mcpCall = (token: string, method: string, params: Record<string, unknown> = {}) =>
  call("POST", "/mcp", { token, headers: { accept: "application/json, text/event-stream" }, body: { jsonrpc: "2.0", id: 1, method, params } });
