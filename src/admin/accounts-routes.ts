import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createAccount, findAccount, listAccounts, setPassword, type AccountRecord } from "../auth/accounts";
import type { AppEnv } from "../env";
import { Email } from "../auth/schemas";
import { ApiError, notFound } from "../http/problem";
import { pageSize } from "../http/query";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";
import { log } from "../log";

export const adminAccountRoutes = createRouter();
const credits = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const password = z.string().min(8).max(1024);
const Account = z.object({ id: z.uuid(), email: z.string(), credits: z.number().int() }).openapi("AdminAccount");
const AccountList = z.object({ items: z.array(Account) }).openapi("AdminAccountList");
/** The body of POST /admin/accounts. */
export const CreateAccountBody = z.strictObject({ email: Email, password, credits: credits.default(0) });
const AccountsQuery = z.strictObject({
  email: Email.optional().openapi({ description: "Only the account with this email (case-insensitive)" }),
  after: z.string().max(320).optional().openapi({ description: "The last email of the previous page: the list continues after it" }),
  // Each listed account's balance is one call to its ledger, so a page stays well inside a request's subrequest budget.
  limit: pageSize("limit", { max: 100, fallback: 100 }),
});

const ledgerOf = (c: Context<AppEnv>, accountId: string) => c.env.ACCOUNT_LEDGER.getByName(accountId);
const withBalance = async (c: Context<AppEnv>, account: AccountRecord) => ({ ...account, credits: (await ledgerOf(c, account.id).balance(account.id)) ?? 0 });

adminAccountRoutes.openapi(
  createRoute({
    method: "post",
    path: "/accounts",
    operationId: "createAccount",
    tags: ["Admin"],
    summary: "Create an account",
    security: adminSecurity,
    request: { body: jsonBody(CreateAccountBody) },
    responses: { 201: jsonResponse(Account, "Created"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const input = c.req.valid("json");
    const account = await createAccount(c.env.DB, input);
    if (!account) throw new ApiError(409, "conflict", "An account with this email already exists.");
    try {
      await ledgerOf(c, account.id).open(account.id, input.credits);
    } catch (error) {
      // Not lost: a ledger that starts unopened reads the opening balance from D1.
      log.warn("ledger_open_failed", { accountId: account.id }, error);
    }
    return c.json({ ...account, credits: input.credits }, 201);
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
  async (c) => {
    const accounts = await listAccounts(c.env.DB, c.req.valid("query"));
    return c.json({ items: await Promise.all(accounts.map((a) => withBalance(c, a))) }, 200);
  },
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
    const { id } = c.req.valid("param");
    const { credits, password } = c.req.valid("json");
    const account = password === undefined ? await findAccount(c.env.DB, id) : await setPassword(c.env.DB, id, password);
    if (!account) throw notFound("No account has this id.");
    if (credits === undefined) return c.json(await withBalance(c, account), 200);
    return c.json({ ...account, credits: (await ledgerOf(c, id).setBalance(id, credits)) ?? credits }, 200);
  },
);
