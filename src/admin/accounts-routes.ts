import { createRoute, z } from "@hono/zod-openapi";
import { createAccount, listAccounts, updateAccount } from "../auth/accounts";
import { Email } from "../auth/schemas";
import { ApiError, notFound } from "../http/problem";
import { pageSize } from "../http/query";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";

export const adminAccountRoutes = createRouter();
const credits = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const password = z.string().min(8).max(1024);
const Account = z.object({ id: z.uuid(), email: z.string(), credits: z.number().int() }).openapi("AdminAccount");
const AccountList = z.object({ items: z.array(Account) }).openapi("AdminAccountList");
const AccountsQuery = z.strictObject({
  email: Email.optional().openapi({ description: "Only the account with this email (case-insensitive)" }),
  after: z.string().max(320).optional().openapi({ description: "The last email of the previous page: the list continues after it" }),
  limit: pageSize("limit", { max: 1000, fallback: 100 }),
});

adminAccountRoutes.openapi(
  createRoute({
    method: "post",
    path: "/accounts",
    operationId: "createAccount",
    tags: ["Admin"],
    summary: "Create an account",
    security: adminSecurity,
    request: { body: jsonBody(z.strictObject({ email: Email, password, credits: credits.default(0) })) },
    responses: { 201: jsonResponse(Account, "Created"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const account = await createAccount(c.env.DB, c.req.valid("json"));
    if (!account) throw new ApiError(409, "conflict", "An account with this email already exists.");
    return c.json(account, 201);
  },
);

adminAccountRoutes.openapi(
  createRoute({
    method: "get",
    path: "/accounts",
    operationId: "listAccounts",
    tags: ["Admin"],
    summary: "Find accounts: by email, or all of them in email order",
    security: adminSecurity,
    request: { query: AccountsQuery },
    responses: { 200: jsonResponse(AccountList, "Accounts in email order"), ...problems(400, 401, 404) },
  }),
  async (c) => c.json({ items: await listAccounts(c.env.DB, c.req.valid("query")) }, 200),
);

adminAccountRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/accounts/{id}",
    operationId: "updateAccount",
    tags: ["Admin"],
    summary: "Set an account's credits or password",
    security: adminSecurity,
    description: "A new password ends every session of the account; its API tokens stay valid.",
    request: { params: z.object({ id: z.uuid() }), body: jsonBody(z.strictObject({ credits: credits.optional(), password: password.optional() })) },
    responses: { 200: jsonResponse(Account, "Updated"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const account = await updateAccount(c.env.DB, c.req.valid("param").id, c.req.valid("json"));
    if (!account) throw notFound("No account has this id.");
    return c.json(account, 200);
  },
);
