import { createRoute, z } from "@hono/zod-openapi";
import { asc, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { accounts, projects } from "../db/schema";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";

export const adminMoveRoutes = createRouter();

const MoveRequest = z
  .strictObject({
    kind: z
      .enum(["accounts", "projects"])
      .openapi({ description: "accounts: balances and recent charges into AccountLedger objects; projects: chat lists into ProjectChats objects" }),
    after: z.uuid().optional().openapi({ description: "`next` of the previous page; omit to start" }),
    // Each id is one Durable Object call, so a page stays well inside a request's subrequest budget.
    limit: z.number().int().min(1).max(100).default(50),
  })
  .openapi("MoveRequest");
const MoveResult = z
  .object({
    kind: z.enum(["accounts", "projects"]),
    moved: z.number().int().openapi({ description: "Objects that read their D1 data now" }),
    alreadyMoved: z.number().int().openapi({ description: "Objects that had it already (moved before, or created since the move)" }),
    next: z.uuid().nullable().openapi({ description: "Pass as `after` for the next page; null when every id was visited" }),
  })
  .openapi("MoveResult");

/** Ids of accounts or projects in id order after `after`: the move walks every one. */
async function idsAfter(d1: D1Database, kind: "accounts" | "projects", after: string | undefined, limit: number): Promise<string[]> {
  const table = kind === "accounts" ? accounts : projects;
  const rows = await drizzle(d1)
    .select({ id: table.id })
    .from(table)
    .where(after === undefined ? undefined : gt(table.id, after))
    .orderBy(asc(table.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

adminMoveRoutes.openapi(
  createRoute({
    method: "post",
    path: "/move-to-objects",
    operationId: "moveToObjects",
    tags: ["Admin"],
    summary: "The one-time move of balances and chat lists from D1 into their Durable Objects, one page of ids at a time",
    description:
      "Idempotent: an object that has its data already is left as it is, and objects that were not visited bring their D1 data themselves the first time they are used. docs/deploy.md has the procedure.",
    security: adminSecurity,
    request: { body: jsonBody(MoveRequest) },
    responses: { 200: jsonResponse(MoveResult, "What this page moved"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { kind, after, limit } = c.req.valid("json");
    const ids = await idsAfter(c.env.DB, kind, after, limit);
    const outcomes = await Promise.all(
      ids.map((id) => (kind === "accounts" ? c.env.ACCOUNT_LEDGER.getByName(id).moveFromD1(id) : c.env.PROJECT_CHATS.getByName(id).moveFromD1(id))),
    );
    return c.json(
      {
        kind,
        moved: outcomes.filter((o) => o === "moved").length,
        alreadyMoved: outcomes.filter((o) => o === "already_moved").length,
        next: ids.length === limit ? ids.at(-1)! : null,
      },
      200,
    );
  },
);
