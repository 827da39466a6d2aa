import { createRoute, z } from "@hono/zod-openapi";
import { deleteCookie, setCookie } from "hono/cookie";
import { ApiError, notFound, unauthorized } from "../http/problem";
import { anonymous, createRouter, headers, jsonBody, jsonResponse, problems } from "../http/router";
import { endSession } from "./accounts";
import { issueApiToken, listApiTokens, MAX_ACTIVE_TOKENS, revokeApiToken, setTokenCreditLimit } from "./api-tokens";
import { ApiTokenItem, ApiTokenList, CreateApiTokenRequest, CreatedApiToken, SessionToken, SetCreditLimitRequest, SignInRequest } from "./schemas";
import { signIn } from "./sign-in";
import { SESSION_COOKIE, SESSION_COOKIE_OPTIONS, invalidSession, isAppOrigin, requireSession, type SessionEnv, sessionSecurity } from "./session";

/** Sign-in, sign-out and API token management, mounted at /auth (behind its CORS for APP_ORIGINS only, see app.ts). */
export const authRoutes = createRouter<SessionEnv>();

authRoutes.openapi(
  createRoute({
    method: "post",
    path: "/token",
    operationId: "signIn",
    tags: ["Account"],
    security: anonymous,
    summary: "Sign in with email and password; returns an account session token",
    request: { body: jsonBody(SignInRequest) },
    responses: {
      200: jsonResponse(SessionToken, "A session token for /auth/*; from an APP_ORIGINS origin also the session cookie", "Cache-Control", "Set-Cookie"),
      ...problems(400, 401, 429),
    },
  }),
  async (c) => {
    const outcome = await signIn(c.env, c.req.valid("json"), c.req.header("cf-connecting-ip"));
    if (outcome.kind === "limited") {
      throw new ApiError(429, "rate_limited", "Too many failed sign-ins for this email from this address; try again later.", {
        headers: { "retry-after": String(outcome.retryAfterSeconds) },
      });
    }
    if (outcome.kind === "wrong") throw unauthorized("account", "The email or password is wrong.", null);
    const { token, expiresAt } = outcome;
    if (isAppOrigin(c.env, c.req.header("origin"))) {
      setCookie(c, SESSION_COOKIE, token, { ...SESSION_COOKIE_OPTIONS, expires: new Date(expiresAt) });
    }
    c.header("cache-control", "no-store");
    return c.json({ token, tokenType: "Bearer" as const, expiresAt }, 200);
  },
);

authRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/token",
    operationId: "signOut",
    tags: ["Account"],
    summary: "Sign out: end this account session (API tokens stay valid)",
    security: sessionSecurity,
    middleware: [requireSession],
    responses: {
      204: { description: "Ended; the session cookie is cleared", headers: headers("Set-Cookie") },
      ...problems(401),
    },
  }),
  async (c) => {
    // A parallel sign-out may have ended it between the check and here: then this one did not.
    if (!(await endSession(c.env.DB, c.get("sessionHash")))) throw invalidSession("The session has ended already.");
    deleteCookie(c, SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
    return c.body(null, 204);
  },
);

authRoutes.use("/api-tokens", requireSession);
authRoutes.use("/api-tokens/*", requireSession);

authRoutes.openapi(
  createRoute({
    method: "post",
    path: "/api-tokens",
    operationId: "createApiToken",
    tags: ["Account"],
    summary: "Create a personal API token; the secret is in this response only",
    description: `An account may hold at most ${MAX_ACTIVE_TOKENS} active (unexpired, unrevoked) tokens; another answers 409 \`token_limit_reached\`. \`expiresAt\` is in the future and at most 365 days ahead.`,
    security: sessionSecurity,
    request: { body: jsonBody(CreateApiTokenRequest) },
    responses: { 201: jsonResponse(CreatedApiToken, "Created", "Cache-Control"), ...problems(400, 401, 409) },
  }),
  async (c) => {
    const outcome = await issueApiToken(c.env, c.get("accountId"), c.req.valid("json"));
    // A fresh id is never taken: only the limit stops it.
    if (outcome.kind !== "created") throw new ApiError(409, "token_limit_reached", `An account may have at most ${MAX_ACTIVE_TOKENS} active tokens; delete one first.`);
    c.header("cache-control", "no-store");
    return c.json({ token: outcome.token, item: outcome.item }, 201);
  },
);

authRoutes.openapi(
  createRoute({
    method: "get",
    path: "/api-tokens",
    operationId: "listApiTokens",
    tags: ["Account"],
    summary: "The account's unrevoked tokens, newest first (expired ones included)",
    security: sessionSecurity,
    responses: { 200: jsonResponse(ApiTokenList, "Token records, without secrets"), ...problems(401) },
  }),
  async (c) => c.json({ items: await listApiTokens(c.env, c.get("accountId")) }, 200),
);

const TokenParams = z.object({ tokenId: z.string().openapi({ format: "uuid" }) });

authRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/api-tokens/{tokenId}",
    operationId: "setApiTokenCreditLimit",
    tags: ["Account"],
    summary: "Set or remove a token's credit limit",
    description:
      "Raising, lowering (also below `creditsUsed`) or removing the limit holds for tasks dispatched after this returns. At the limit, a send, steer or " +
      "answer made with the token is refused with 403 `token_credit_limit`, and a queued task that would pass it fails with that code, nothing charged.",
    security: sessionSecurity,
    request: { params: TokenParams, body: jsonBody(SetCreditLimitRequest) },
    responses: { 200: jsonResponse(ApiTokenItem, "The token's record"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const item = await setTokenCreditLimit(c.env, c.get("accountId"), c.req.valid("param").tokenId, c.req.valid("json").creditLimit);
    if (!item) throw notFound("You have no unrevoked token with this id.");
    return c.json(item, 200);
  },
);

authRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/api-tokens/{tokenId}",
    operationId: "revokeApiToken",
    tags: ["Account"],
    summary: "Revoke a token: later requests with it are refused; accepted work is not cancelled",
    security: sessionSecurity,
    request: { params: TokenParams },
    responses: { 204: { description: "Revoked" }, ...problems(401, 404) },
  }),
  async (c) => {
    if (!(await revokeApiToken(c.env, c.get("accountId"), c.req.valid("param").tokenId))) throw notFound("You have no unrevoked token with this id.");
    return c.body(null, 204);
  },
);
