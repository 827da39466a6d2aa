import { OAuthAuthorizationServer, OAuthResourceServer, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { SCOPES } from "../auth/scopes";
import { config } from "../config";
import type { Env } from "../env";
import { log } from "../log";
import { governLibraryFetch } from "./client-metadata";
import { registrationRefusal } from "./client-registration";

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 86_400;

/** The paths OAuth serves, all 404 without PUBLIC_URL. */
export const isOAuthPath = (path: string) => path.startsWith("/oauth/") || path.startsWith("/.well-known/oauth-");

/** The protected resources, each with a gate of its own that takes grants made for it: /mcp and /a2a. */
export type ResourceName = "mcp" | "a2a";
/** A protected resource: its URL (a grant's `resource`), where its RFC 9728 metadata is, and the library's role serving that. */
type ProtectedResource = { url: string; metadataUrl: string; metadata: OAuthResourceServer };
/** The roles of the library for one deployment: the authorization server, and each resource's metadata. */
export type OAuthRoles = { issuer: string; server: OAuthAuthorizationServer; resources: Record<ResourceName, ProtectedResource> };
const RESOURCE_NAMES: Record<ResourceName, string> = { mcp: "Project Chat MCP server", a2a: "Project Chat A2A agents" };

// One pair per PUBLIC_URL an isolate has seen (one in practice); null where the library refused it as an issuer.
const built = new Map<string, OAuthRoles | null>();

/**
 * The OAuth roles of this deployment, or undefined when it has none: without PUBLIC_URL (the issuer
 * and /mcp's resource are built from it, never from a request's Host) every OAuth endpoint is 404.
 */
export function oauthRoles(env: Env): OAuthRoles | undefined {
  const issuer = config(env).publicOrigin;
  if (!issuer) return undefined;
  // Whatever the library fetches goes through the service's outbound rules (client-metadata.ts).
  governLibraryFetch(env);
  let roles = built.get(issuer);
  if (roles === undefined) built.set(issuer, (roles = build(issuer)));
  return roles ?? undefined;
}

/**
 * The request as if sent to the issuer's own origin: the library serves its endpoints only there, and the
 * Worker may also be reached under another name (workers.dev beside a custom domain, localhost beside 127.0.0.1).
 */
export const atIssuer = (roles: OAuthRoles, request: Request): Request => {
  const url = new URL(request.url);
  return new Request(`${roles.issuer}${url.pathname}${url.search}`, request);
};

/** The library's helpers (authorization requests, grants), or undefined without PUBLIC_URL. */
export const oauthApi = (env: Env): OAuthHelpers | undefined => oauthRoles(env)?.server.getOAuthApi(env);

function build(issuer: string): OAuthRoles | null {
  const urls: Record<ResourceName, string> = { mcp: `${issuer}/mcp`, a2a: `${issuer}/a2a` };
  try {
    const server = new OAuthAuthorizationServer<Env>({
      issuer,
      resources: [urls.mcp, urls.a2a],
      // A request (or a grant from before /a2a) that names no resource is for /mcp, as it was while /mcp was the only one.
      defaultResource: urls.mcp,
      legacyGrantResource: urls.mcp,
      authorizeEndpoint: AUTHORIZE_PATH,
      tokenEndpoint: TOKEN_PATH,
      clientRegistrationEndpoint: REGISTER_PATH,
      scopesSupported: [...SCOPES],
      accessTokenTTL: ACCESS_TOKEN_SECONDS,
      // Each refresh token is good for 30 days from its issue: a grant lives while it is used at least monthly.
      refreshTokenTTL: REFRESH_TOKEN_SECONDS,
      refreshTokenIdleTTL: REFRESH_TOKEN_SECONDS,
      clientIdMetadataDocumentEnabled: true,
      // Native apps' RFC 8252 schemes (com.example.app:/callback); remote http never.
      allowPrivateUseRedirectUris: true,
      clientRegistrationCallback: ({ clientMetadata }) => registrationRefusal(clientMetadata as Record<string, unknown>),
      // Expected refusals (a reused code, a wrong verifier) are the client's; the library's default would log each one.
      onError: ({ status, code, internal }) => {
        if (status >= 500) log.warn("oauth_error", { status, code, reason: internal.reason });
      },
    });
    const resource = (name: ResourceName): ProtectedResource => ({
      url: urls[name],
      metadataUrl: `${issuer}/.well-known/oauth-protected-resource/${name}`,
      metadata: new OAuthResourceServer<Env>({
        resourceMetadata: { resource: urls[name], authorization_servers: [issuer], bearer_methods_supported: ["header"], resource_name: RESOURCE_NAMES[name] },
        requiredScopes: [...SCOPES],
        validateToken: (env) => (target, token) => server.validateToken(target, token, env),
        // Only its metadata document is routed here: each resource has a gate of its own, for personal tokens and grants alike.
        handler: { fetch: () => new Response(null, { status: 404 }) },
      }),
    });
    return { issuer, server, resources: { mcp: resource("mcp"), a2a: resource("a2a") } };
  } catch (error) {
    // The library takes https issuers, and http only on a loopback host.
    log.error("oauth_disabled", { reason: "PUBLIC_URL is not an https origin (or http on a loopback host)" }, error);
    return null;
  }
}
