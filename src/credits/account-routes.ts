import { createRoute } from "@hono/zod-openapi";
import { requireSession, type SessionEnv, sessionSecurity } from "../auth/session";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { invalidRequest, notFound } from "../http/problem";
import { createRouter, jsonResponse, problems } from "../http/router";
import { AccountCredits, StatementQuery } from "./schemas";

/** The account's own credits, mounted at /auth behind the account session (an API token cannot read them). */
export const accountCreditRoutes = createRouter<SessionEnv>();
accountCreditRoutes.use("/credits", requireSession);

accountCreditRoutes.openapi(
  createRoute({
    method: "get",
    path: "/credits",
    operationId: "getAccountCredits",
    tags: ["Account"],
    summary: "The account's balance and its statement of charges, refunds and adjustments, newest first",
    description:
      "Each charge and refund appears exactly once; an `adjustment` is an operator's change (the signed difference) or the opening balance. " +
      "Entries are kept at least 90 days and the newest always, so the first item's balanceAfter is the balance.",
    security: sessionSecurity,
    request: { query: StatementQuery },
    responses: { 200: jsonResponse(AccountCredits, "The balance and one page of the statement", "Cache-Control"), ...problems(400, 401) },
  }),
  async (c) => {
    const accountId = c.get("accountId");
    const { cursor, limit } = c.req.valid("query");
    const before = cursor === undefined ? undefined : decodeCursor(accountId, cursor);
    if (cursor !== undefined && before === undefined) throw invalidRequest("The cursor is not one this statement gave.", [{ path: "cursor", message: "unknown cursor" }]);
    const page = await c.env.ACCOUNT_LEDGER.getByName(accountId).statementPage(accountId, limit, before);
    if (!page) throw notFound("The account has no credits.");
    c.header("cache-control", "no-store");
    return c.json({ balance: page.balance, items: page.items, nextCursor: page.before === null ? null : encodeCursor(accountId, page.before) }, 200);
  },
);
