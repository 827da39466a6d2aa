import type { Context } from "hono";
import { timed } from "../http/server-timing";
import { requireScope, type GatedEnv } from "../auth/gate";
import { ApiError, notFound } from "../http/problem";
import { problems } from "../http/router";
import { isUuid } from "../ids";
import { projectAccess } from "./access";

// What every operation under /v1/projects/{projectId} shares: the bearer scheme, the scope guards and the problems it can answer.
export const security = [{ userApiTokenBearer: [] }];
export const read = [requireScope("chat:read")];
export const write = [requireScope("chat:write")];
export const projectProblems = problems(400, 401, 403, 404, 429);

/** How a hop of an answer is measured for Server-Timing (outside a request, not at all). */
export type Timed = <R>(name: string, work: () => R) => Promise<Awaited<R>>;

/** No measuring: the work's value. */
export async function untimed<R>(_name: string, work: () => R): Promise<Awaited<R>> {
  return await work();
}

/** The account's access to the project: 404 when unknown, not a member or suspended (or a malformed id); 403 for a viewer writing. */
export async function accessOf(d1: D1Database, accountId: string, need: "read" | "write", projectId: string, measure: Timed = untimed) {
  const access = isUuid(projectId) ? await measure("access", () => projectAccess(d1, projectId.toLowerCase(), accountId)) : null;
  if (!access) throw notFound("The project does not exist or is not available to you.");
  if (need === "write" && access.role === "viewer") throw new ApiError(403, "forbidden", "Viewers of this project can read chats but not change them.");
  return access;
}

/** The caller's access to the project, for a route. */
export const authorise = (c: Context<GatedEnv>, need: "read" | "write", projectId: string) =>
  accessOf(c.env.DB, c.get("caller").accountId, need, projectId, (name, work) => timed(c, name, work));
