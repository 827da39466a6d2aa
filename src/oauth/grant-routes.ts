import { createRoute, z } from "@hono/zod-openapi";
import { CredentialCreditFields, SetCreditLimitRequest } from "../auth/schemas";
import { SCOPES } from "../auth/scopes";
import { requireSession, type SessionEnv, sessionSecurity } from "../auth/session";
import { notFound } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { disconnectApp, listConnectedApps, setGrantCreditLimit } from "./grants";

const OAuthGrant = z
  .object({
    id: z.uuid(),
    clientId: z.string().openapi({ description: "The client's id: a registered client's, or a metadata-document client's https URL" }),
    clientName: z
      .string()
      .openapi({ description: "The name the consent page showed (at most 100 characters; a metadata-document client's domain); chosen by the client, not verified" }),
    scopes: z.array(z.enum(SCOPES)),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable().openapi({ description: "The last request to /mcp with one of this grant's tokens" }),
    ...CredentialCreditFields,
  })
  .openapi("OAuthGrant");

const OAuthGrantList = z.object({ items: z.array(OAuthGrant).openapi({ description: "Newest first" }) }).openapi("OAuthGrantList");

/**
 * The account's OAuth grants (connected apps), mounted at /auth beside token management: the
 * /auth router's account CORS and body guards cover these paths too; the session is required here.
 */
export const oauthGrantRoutes = createRouter<SessionEnv>();
oauthGrantRoutes.use("/oauth-grants", requireSession);
oauthGrantRoutes.use("/oauth-grants/*", requireSession);

oauthGrantRoutes.openapi(
  createRoute({
    method: "get",
    path: "/oauth-grants",
    operationId: "listOAuthGrants",
    tags: ["Account"],
    summary: "The apps connected through OAuth (for /mcp), newest first",
    security: sessionSecurity,
    responses: { 200: jsonResponse(OAuthGrantList, "The account's grants, without tokens"), ...problems(401) },
  }),
  async (c) => c.json({ items: await listConnectedApps(c.env, c.get("accountId")) }, 200),
);

const GrantParams = z.object({ grantId: z.string().openapi({ format: "uuid" }) });

oauthGrantRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/oauth-grants/{grantId}",
    operationId: "setOAuthGrantCreditLimit",
    tags: ["Account"],
    summary: "Set or remove a connected app's credit limit",
    description: "As for a token: the limit holds for the grant's tasks dispatched after this returns; null removes it.",
    security: sessionSecurity,
    request: { params: GrantParams, body: jsonBody(SetCreditLimitRequest) },
    responses: { 200: jsonResponse(OAuthGrant, "The grant's record"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const app = await setGrantCreditLimit(c.env, c.get("accountId"), c.req.valid("param").grantId, c.req.valid("json").creditLimit);
    if (!app) throw notFound("You have no connected app with this id.");
    return c.json(app, 200);
  },
);

oauthGrantRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/oauth-grants/{grantId}",
    operationId: "revokeOAuthGrant",
    tags: ["Account"],
    summary: "Disconnect an app: its access and refresh tokens stop working at once",
    security: sessionSecurity,
    request: { params: GrantParams },
    responses: { 204: { description: "Revoked" }, ...problems(401, 404) },
  }),
  async (c) => {
    if (!(await disconnectApp(c.env, c.get("accountId"), c.req.valid("param").grantId))) throw notFound("You have no connected app with this id.");
    return c.body(null, 204);
  },
);
