import type { AppEnv, Env } from "../env";
import { hashSecret } from "../auth/secrets";
import { log } from "../log";
import type { Context } from "hono";
import { atIssuer, type OAuthRoles } from "./authorization-server";
import { isClientIdUrl, lookUpClientDocument } from "./client-metadata";
import { grantGateName, type GrantMetadata } from "./grants";

// RFC 7636 §4.1: 43 to 128 unreserved characters.
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

type StoredGrant = { redirectUri?: string; metadata?: Partial<GrantMetadata> | null };
type Form = URLSearchParams;

/** An RFC 6749 §5.2 error answer, as the library writes its own. */
const oauthError = (status: 400 | 401, error: string, description: string) =>
  Response.json({ error, error_description: description }, { status, headers: { "cache-control": "no-store", pragma: "no-cache" } });

/** The library's grant record a code or token (`userId:grantId:secret`) belongs to, with its ids; undefined when it has no such shape or grant. */
async function grantOf(env: Env, credential: string | null): Promise<{ userId: string; grantId: string; grant: StoredGrant } | undefined> {
  const [userId, grantId, secret, extra] = (credential ?? "").split(":");
  if (!userId || !grantId || !secret || extra !== undefined) return undefined;
  const grant = await env.OAUTH_KV.get<StoredGrant>(`grant:${userId}:${grantId}`, { type: "json" });
  return grant ? { userId, grantId, grant } : undefined;
}

/** The client id HTTP Basic authentication names, when the request uses it. */
function basicClientId(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? "");
  if (!match) return undefined;
  try {
    const decoded = atob(match[1]!);
    const colon = decoded.indexOf(":");
    return colon < 0 ? undefined : decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/**
 * `/oauth/token`: the library's token endpoint (and RFC 7009 revocation), with what the contract asks
 * beyond it: a body `client_id` naming the Basic-authenticated client is identification, not a second
 * authentication; a metadata-document client is looked up under the outbound rules first; a code is
 * exchanged only with the verifier's RFC 7636 shape and the redirect_uri its request named; and a
 * refresh token presented outside a lost answer's retry ends the whole grant.
 */
export async function tokenEndpoint(c: Context<AppEnv>, roles: OAuthRoles, ctx: ExecutionContext): Promise<Response> {
  const request = atIssuer(roles, c.req.raw);
  const type = c.req.header("content-type") ?? "";
  if (request.method !== "POST" || !type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return roles.server.fetch(request, c.env, ctx);
  const form = new URLSearchParams(await request.clone().text());
  const basic = basicClientId(c.req.header("authorization"));
  if (basic !== undefined && form.getAll("client_id").every((id) => id === basic)) form.delete("client_id");

  const clientId = basic ?? form.get("client_id");
  if (clientId && isClientIdUrl(clientId)) {
    const lookup = await lookUpClientDocument(c.env, clientId, c.req.header("cf-connecting-ip"));
    if (lookup.kind !== "document") return oauthError(401, "invalid_client", "The client's metadata document could not be fetched.");
  }
  const library = (body: Form) => {
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    return roles.server.fetch(new Request(request.url, { method: "POST", headers, body: body.toString() }), c.env, ctx);
  };
  switch (form.get("grant_type")) {
    case "authorization_code":
      return exchangeCode(c.env, form, library);
    case "refresh_token":
      return refresh(c.env, roles, form, library);
    default:
      return library(form);
  }
}

/** The code exchange: the verifier's shape and the authorization request's redirect_uri, then the grant's first refresh token recorded. */
async function exchangeCode(env: Env, form: Form, library: (body: Form) => Promise<Response>): Promise<Response> {
  const verifier = form.get("code_verifier");
  if (verifier !== null && !CODE_VERIFIER.test(verifier)) {
    return oauthError(400, "invalid_grant", "code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~' (RFC 7636).");
  }
  const owner = await grantOf(env, form.get("code"));
  const named = owner?.grant.redirectUri;
  if (named !== undefined && form.get("redirect_uri") !== named) {
    return oauthError(400, "invalid_grant", "redirect_uri must be sent, identical to the one the authorization request named.");
  }
  const answer = await library(form);
  const ours = owner?.grant.metadata?.grant;
  if (ours) await recordIssued(env, ours, null, answer);
  return answer;
}

/**
 * A refresh, through the grant's gate: a used refresh token is answered again only within a minute of
 * its first use while its successor is unused (a retried, lost answer); any other presentation of a used
 * token revokes the grant, its gate at once and the library's records after, and is invalid_grant.
 */
async function refresh(env: Env, roles: OAuthRoles, form: Form, library: (body: Form) => Promise<Response>): Promise<Response> {
  const presented = form.get("refresh_token");
  const owner = await grantOf(env, presented);
  const ours = owner?.grant.metadata?.grant;
  if (!owner || !ours || !presented) return library(form);
  const gate = env.TOKEN_GATE.getByName(grantGateName(ours));
  const presentedHash = await hashSecret(presented);
  const verdict = await gate.presentRefresh(grantGateName(ours), presentedHash);
  if (verdict !== "proceed") {
    if (verdict === "replay") await roles.server.getOAuthApi(env).revokeGrant(owner.grantId, owner.userId);
    return oauthError(400, "invalid_grant", "This refresh token has been used or revoked; the grant has ended. Authorize again.");
  }
  let answer: Response | undefined;
  try {
    answer = await library(form);
  } finally {
    if (!answer?.ok) await gate.refreshAnswered(presentedHash, null);
  }
  await recordIssued(env, ours, presentedHash, answer);
  return answer;
}

/** Tells the grant's gate which tokens a successful answer issued (by hash); an error answer issued none. */
async function recordIssued(env: Env, grant: string, presentedHash: string | null, answer: Response): Promise<void> {
  if (!answer.ok) return;
  const gate = env.TOKEN_GATE.getByName(grantGateName(grant));
  try {
    const body = await answer.clone().json<{ access_token?: string; refresh_token?: string }>();
    const issued = body.access_token && body.refresh_token ? { refreshHash: await hashSecret(body.refresh_token), accessHash: await hashSecret(body.access_token) } : null;
    await gate.refreshAnswered(presentedHash, issued);
  } catch (error) {
    // The client has its tokens; an unrecorded one is judged by the library alone when it is presented.
    log.warn("refresh_lineage_not_recorded", {}, error);
  }
}
