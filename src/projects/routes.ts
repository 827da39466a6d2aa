import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { createRouter, jsonResponse, problems } from "../http/router";
import { ListProjectsQuery, ProjectList } from "./schemas";
import { memberProjects } from "./store";
import { read, security } from "./guards";

/** The projects a token can reach: a personal token is not tied to one project, so integrations find their ids here. */
export const projectRoutes = createRouter<GatedEnv>();

projectRoutes.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listProjects",
    tags: ["Projects"],
    summary: "The active projects the token's account is a member of, ordered by name",
    description: "Each with the account's role in it. Suspended projects and projects the account is not a member of are left out. No query parameters.",
    security,
    middleware: read,
    request: { query: ListProjectsQuery },
    responses: { 200: jsonResponse(ProjectList, "The projects, ordered by name"), ...problems(400, 401, 403, 429) },
  }),
  async (c) => c.json({ items: await memberProjects(c.env.DB, c.get("caller").accountId) }, 200),
);
