import { createMiddleware } from "hono/factory";
import { admitAt, admitPersonalToken, type ApiCaller, type GatedEnv, proceedAs } from "../auth/gate";
import { API_TOKEN_PREFIX, bearerToken, hashSecret } from "../auth/secrets";
import type { Env } from "../env";
import { ApiError, unauthorized } from "../http/problem";
import { oauthRoles, type OAuthRoles, type ResourceName } from "./authorization-server";
import { grantGateName, type GrantProps } from "./grants";

const REVOKED = "The access token is invalid, expired or revoked; authorize again.";

/**
 * An OAuth access token issued for a resource: the library checks it against its KV record (audience,
 * expiry), then the grant's own gate admits and counts it, as a personal token's does. The gate
 * answers for revocation at once, and acts with the token's scopes as far as the grant still has them.
 */
async function admitAccessToken(env: Env, roles: OAuthRoles, resource: ResourceName, token: string): Promise<{ caller: ApiCaller; headers: Record<string, string> }> {
  let validated = await roles.server.validateToken<GrantProps>(roles.resources[resource].url, token, env);
  // A grant whose request named no resource is bound to /mcp by the library, and works at every resource.
  if (!validated && resource !== "mcp") {
    const unnamed = await roles.server.validateToken<GrantProps>(roles.resources.mcp.url, token, env);
    if (unnamed?.props.anyResource) validated = unnamed;
  }
  if (!validated) throw unauthorized("api", REVOKED);
  const name = grantGateName(validated.props.grant);
  const { accountId, scopes, atCreditLimit, headers } = await admitAt(env, name, REVOKED, await hashSecret(token));
  return { caller: { accountId, scopes: scopes.filter((s) => validated.scope.includes(s)), gateName: name, atCreditLimit }, headers };
}

/** A 401 that also says where this resource's OAuth metadata is (RFC 9728), so a client can find where to sign in. */
function pointingAtMetadata(error: unknown, roles: OAuthRoles | undefined, resource: ResourceName): unknown {
  if (!roles || !(error instanceof ApiError) || error.status !== 401) return error;
  const challenge = `${error.options.headers?.["www-authenticate"] ?? 'Bearer realm="api"'}, resource_metadata="${roles.resources[resource].metadataUrl}"`;
  return new ApiError(401, error.code, error.message, { ...error.options, headers: { ...error.options.headers, "www-authenticate": challenge } });
}

/**
 * Who may call a protected resource (/mcp, /a2a): a personal API token exactly as on /v1, or an OAuth access token
 * granted for that resource (accepted at no other), or for no resource named (accepted at both). Decided before any message is read.
 */
export const resourceCredentials = (resource: ResourceName) =>
  createMiddleware<GatedEnv>(async (c, next) => {
    const roles = oauthRoles(c.env);
    const token = bearerToken(c.req.header("authorization"));
    let admission: Awaited<ReturnType<typeof admitAccessToken>>;
    try {
      if (!token && roles) throw unauthorized("api", "Send a personal API token as Authorization: Bearer pct_…, or authorize through OAuth (resource_metadata names where).");
      admission = roles && token && !token.startsWith(API_TOKEN_PREFIX) ? await admitAccessToken(c.env, roles, resource, token) : await admitPersonalToken(c.env, token);
    } catch (error) {
      throw pointingAtMetadata(error, roles, resource);
    }
    await proceedAs(c, admission.caller, admission.headers, next);
  });
