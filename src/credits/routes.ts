import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { config } from "../config";
import { invalidRequest } from "../http/problem";
import { createRouter, jsonResponse } from "../http/router";
import { dayOf } from "./project-usage";
import { ProjectCredits, ProjectUsage, UsageQuery } from "./schemas";
import { projectProblems, authorise, read, security } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";
import { DAY_MS } from "../time";

// The default range is 30 days ending today; a range may span at most 365 days after its first.
const DEFAULT_DAYS_BACK = 29;
const RANGE_MAX_DAYS = 365;

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOf = (day: number) => dayOf(day * DAY_MS);

/** What a project's tasks cost and can spend, mounted at /v1/projects: any member with chat:read. */
export const projectCreditRoutes = createRouter<GatedEnv>();

projectCreditRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/credits",
    operationId: "getProjectCredits",
    tags: ["Credits"],
    summary: "Whether a task can run now, what it costs, and (for the owner) the paying balance",
    security,
    middleware: read,
    request: { params: ProjectParams },
    responses: { 200: jsonResponse(ProjectCredits, "The project's credits as your role may see them"), ...projectProblems },
  }),
  async (c) => {
    const access = await authorise(c, "read", c.req.valid("param").projectId);
    const payer = access.project.value.ownerAccountId;
    const { gateName } = c.get("caller");
    const [owed, standing] = await Promise.all([c.env.ACCOUNT_LEDGER.getByName(payer).balance(payer), c.env.TOKEN_GATE.getByName(gateName).creditStanding()]);
    // An owner whose ledger cannot start (no such account) has nothing to spend.
    const balance = owed ?? 0;
    const taskCost = config(c.env).taskCreditCost;
    const { creditLimit, creditsUsed } = standing;
    const credentialCanPay = creditLimit === null || creditLimit - creditsUsed >= taskCost;
    return c.json({ balance: access.role === "owner" ? balance : null, taskCost, canRun: balance >= taskCost && credentialCanPay, credential: { creditLimit, creditsUsed } }, 200);
  },
);

projectCreditRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/usage",
    operationId: "getProjectUsage",
    tags: ["Credits"],
    summary: "Tasks, credits and model tokens of the project's ended tasks per UTC day",
    description:
      "Each task counts on the UTC day its reply ended, with its reply's `usage` (null tokens count as 0), within 5 seconds of its end. " +
      "`from` and `to` are inclusive UTC dates; `to` defaults to today and `from` to 29 days before `to`; a range spans at most 365 days after `from`. Days are kept 400 days.",
    security,
    middleware: read,
    request: { params: ProjectParams, query: UsageQuery },
    responses: { 200: jsonResponse(ProjectUsage, "Days with at least one ended task, oldest first"), ...projectProblems },
  }),
  async (c) => {
    const access = await authorise(c, "read", c.req.valid("param").projectId);
    const query = c.req.valid("query");
    const to = query.to ? dayNumber(query.to) : Math.floor(Date.now() / DAY_MS);
    const from = query.from ? dayNumber(query.from) : to - DEFAULT_DAYS_BACK;
    if (from > to) throw invalidRequest("from must not be after to.", [{ path: "from", message: `after to (${dateOf(to)})` }]);
    if (to - from > RANGE_MAX_DAYS)
      throw invalidRequest(`to may be at most ${RANGE_MAX_DAYS} days after from.`, [{ path: "to", message: `more than ${RANGE_MAX_DAYS} days after from` }]);
    const items = await c.env.PROJECT_CHATS.getByName(access.projectId).usageDays(dateOf(from), dateOf(to));
    return c.json({ items }, 200);
  },
);
