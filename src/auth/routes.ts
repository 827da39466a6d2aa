import { createRoute, z } from "@hono/zod-openapi";
import { deleteCookie, setCookie } from "hono/cookie";
import { ApiError, notFound, unauthorized } from "../http/problem";
import { anonymous, createRouter, headers, jsonBody, jsonResponse, problems } from "../http/router";
import { createSession, endSession, findAccountByEmail } from "./accounts";
import { findUnrevokedToken, insertTokenWithinLimit, listTokens, markRevoked, MAX_ACTIVE_TOKENS, toItem } from "./api-tokens";
import { verifyPassword } from "./passwords";
import { ApiTokenList, CreateApiTokenRequest, CreatedApiToken, SessionToken, SignInRequest, normaliseEmail } from "./schemas";
import { API_TOKEN_PREFIX, SESSION_PREFIX, generateSecret, hashSecret } from "./secrets";
import { signInThrottleFor } from "./sign-in-throttle";
import { SESSION_COOKIE, SESSION_COOKIE_OPTIONS, accountCors, invalidSession, isAppOrigin, requireSession, type SessionEnv } from "./session";
import { jsonBodyGuard } from "../http/json-body";
import { MiB, limitBody } from "../http/middleware";
import { accountCreditRoutes } from "../credits/account-routes";

/** Sign-in, sign-out and API token management, mounted at /auth: credentialed CORS for APP_ORIGINS only. */
export const authRoutes = createRouter<SessionEnv>();
authRoutes.use("*", accountCors, limitBody(MiB), jsonBodyGuard);
const sessionSecurity = [{ accountSessionBearer: [] }];

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
    const { password } = c.req.valid("json");
    const email = normaliseEmail(c.req.valid("json").email);
    // The slot is claimed before the password is checked, so parallel guesses cannot outrun the count.
    const throttle = await signInThrottleFor(c.env, email, c.req.header("cf-connecting-ip"));
    const reservation = await throttle.reserve();
    if (reservation.kind === "limited") {
      throw new ApiError(429, "rate_limited", "Too many failed sign-ins for this email from this address; try again later.", {
        headers: { "retry-after": String(reservation.retryAfterSeconds) },
      });
    }
    const account = await findAccountByEmail(c.env.DB, email);
    // Runs PBKDF2 even for an unknown email, so both failures look and take the same.
    const valid = await verifyPassword(password, account?.passwordHash);
    await throttle.settle(reservation.attempt, Boolean(account && valid));
    if (!account || !valid) {
      throw unauthorized("account", "The email or password is wrong.", null);
    }
    const now = Date.now();
    const token = generateSecret(SESSION_PREFIX);
    const { expiresAt } = await createSession(c.env.DB, account.id, await hashSecret(token), now);
    const origin = c.req.header("origin");
    if (isAppOrigin(c.env, origin)) {
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

authRoutes.use("/credits", requireSession);
authRoutes.route("/", accountCreditRoutes);

authRoutes.use("/api-tokens", requireSession);
authRoutes.use("/api-tokens/*", requireSession);

authRoutes.openapi(
  createRoute({
    method: "post",
    path: "/api-tokens",
    operationId: "createApiToken",
    tags: ["Account"],
    summary: "Create a personal API token; the secret is in this response only",
    security: sessionSecurity,
    request: { body: jsonBody(CreateApiTokenRequest) },
    responses: { 201: jsonResponse(CreatedApiToken, "Created", "Cache-Control"), ...problems(400, 401, 409) },
  }),
  async (c) => {
    const input = c.req.valid("json");
    const token = generateSecret(API_TOKEN_PREFIX);
    const row = await insertTokenWithinLimit(
      c.env.DB,
      { accountId: c.get("accountId"), name: input.name, tokenHash: await hashSecret(token), prefix: token.slice(0, 12), scopes: input.scopes, expiresAt: input.expiresAt },
      new Date().toISOString(),
    );
    if (!row) throw new ApiError(409, "token_limit_reached", `An account may have at most ${MAX_ACTIVE_TOKENS} active tokens; delete one first.`);
    c.header("cache-control", "no-store");
    return c.json({ token, item: toItem(row) }, 201);
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
  async (c) => {
    const rows = await listTokens(c.env.DB, c.get("accountId"));
    // Each token's gate keeps its last use; D1's column holds only uses from before the gates kept it.
    const lastUsed = await Promise.all(rows.map((r) => c.env.TOKEN_GATE.getByName(r.tokenHash).lastUsed(r.tokenHash)));
    const items = rows.map((r, i) => toItem({ ...r, lastUsedAt: lastUsed[i] == null ? r.lastUsedAt : new Date(lastUsed[i]!).toISOString() }));
    return c.json({ items }, 200);
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
    request: { params: z.object({ tokenId: z.string().openapi({ format: "uuid" }) }) },
    responses: { 204: { description: "Revoked" }, ...problems(401, 404) },
  }),
  async (c) => {
    const { tokenId } = c.req.valid("param");
    const token = await findUnrevokedToken(c.env.DB, c.get("accountId"), tokenId);
    if (!token) throw notFound("You have no unrevoked token with this id.");
    // The gate learns first, so the token stops working even if the D1 write below fails.
    await c.env.TOKEN_GATE.getByName(token.tokenHash).revoke(token.tokenHash);
    await markRevoked(c.env.DB, tokenId, new Date().toISOString());
    return c.body(null, 204);
  },
);
