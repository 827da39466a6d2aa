import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { createRouter, jsonResponse } from "../http/router";
import { projectCredits, projectUsage } from "./project-credits";
import { ProjectCredits, ProjectUsage, UsageQuery } from "./schemas";
import { projectProblems, authorise, read, security } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";

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
    return c.json(await projectCredits(c.env, access, c.get("caller")), 200);
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
    return c.json(await projectUsage(c.env, access, c.req.valid("query")), 200);
  },
);
