import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { registrationThrottleFor } from "../auth/sign-in-throttle";
import type { AppEnv } from "../env";
import { limitBody, MiB, publicCors } from "../http/middleware";
import { notFound } from "../http/problem";
import { createRouter } from "../http/router";
import { atIssuer, oauthRoles, REGISTER_PATH, TOKEN_PATH, type OAuthRoles } from "./authorization-server";
import { tokenEndpoint } from "./token-endpoint";

const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";
// Each resource's document at its own path; the bare path is /mcp's, the first resource there was.
const RESOURCE_METADATA_PATHS = {
  "/.well-known/oauth-protected-resource/mcp": "mcp",
  "/.well-known/oauth-protected-resource/a2a": "a2a",
  "/.well-known/oauth-protected-resource": "mcp",
} as const;
// Both documents change only with a deploy; clients may keep them an hour.
const METADATA_CACHE = "public, max-age=3600";
// Client registrations one address may make in 15 minutes. Hosted connectors register from their own servers, a few
// addresses for all their users: generous for them, small beside what a script could fill the store with.
const REGISTRATIONS_PER_ADDRESS = 20;

// Hono types the Worker's own context more narrowly than workers-types; it is the same object.
const workerContext = (c: Context<AppEnv>) => c.executionCtx as unknown as ExecutionContext;

/** The deployment's OAuth roles; every OAuth endpoint is 404 without PUBLIC_URL. */
function rolesOf(c: Context<AppEnv>): OAuthRoles {
  const roles = oauthRoles(c.env);
  if (!roles) throw notFound("OAuth is not set up on this deployment (PUBLIC_URL is unset).");
  return roles;
}

/**
 * A metadata document as the library writes it, asked for without the caller's Origin (this
 * router's public CORS answers for any origin, never with credentials) and made cacheable.
 */
async function metadataDocument(c: Context<AppEnv>, serve: (request: Request) => Promise<Response>, url: string): Promise<Response> {
  const served = await serve(new Request(url, { method: c.req.method }));
  const response = new Response(served.body, served);
  response.headers.set("cache-control", METADATA_CACHE);
  response.headers.delete("pragma");
  return response;
}

/**
 * The library's own endpoints, each wrapped where the contract asks more of it: both metadata
 * documents (RFC 8414, and RFC 9728 at /mcp's path and the bare one) public and cacheable, the
 * token endpoint (with RFC 7009 revocation) as it is, and dynamic registration bounded per address.
 */
export const oauthEndpointRoutes = createRouter();
// Without PUBLIC_URL nothing here exists, whatever the method.
const requireOAuth = createMiddleware<AppEnv>(async (c, next) => {
  rolesOf(c);
  await next();
});
oauthEndpointRoutes.use("/oauth/*", requireOAuth);
oauthEndpointRoutes.use("/.well-known/*", requireOAuth);

oauthEndpointRoutes.use(AUTHORIZATION_SERVER_METADATA_PATH, publicCors);
oauthEndpointRoutes.on(["GET", "HEAD"], AUTHORIZATION_SERVER_METADATA_PATH, (c) => {
  const { server, issuer } = rolesOf(c);
  return metadataDocument(c, (request) => server.fetch(request, c.env, workerContext(c)), `${issuer}${AUTHORIZATION_SERVER_METADATA_PATH}`);
});

for (const [path, name] of Object.entries(RESOURCE_METADATA_PATHS)) {
  oauthEndpointRoutes.use(path, publicCors);
  oauthEndpointRoutes.on(["GET", "HEAD"], path, (c) => {
    const { metadata, metadataUrl } = rolesOf(c).resources[name];
    // The library serves each document at its resource's own well-known URL.
    return metadataDocument(c, (request) => metadata.fetch(request, c.env, workerContext(c)), metadataUrl);
  });
}

oauthEndpointRoutes.on(["POST", "OPTIONS"], TOKEN_PATH, limitBody(MiB), (c) => tokenEndpoint(c, rolesOf(c), workerContext(c)));

oauthEndpointRoutes.on(["POST", "OPTIONS"], REGISTER_PATH, limitBody(MiB), async (c) => {
  const roles = rolesOf(c);
  if (c.req.method === "POST") {
    const reservation = await (await registrationThrottleFor(c.env, c.req.header("cf-connecting-ip"))).reserve(REGISTRATIONS_PER_ADDRESS);
    if (reservation.kind === "limited") {
      const retryAfter = String(reservation.retryAfterSeconds);
      const error = { error: "temporarily_unavailable", error_description: `Too many client registrations from this address; try again in ${retryAfter} s.` };
      return c.json(error, 429, { "retry-after": retryAfter, "cache-control": "no-store" });
    }
  }
  return roles.server.fetch(atIssuer(roles, c.req.raw), c.env, workerContext(c));
});
