import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { ReadMostly, type Seen } from "../db/read-mostly";
import { projectMembers, projects } from "../db/schema";
import { readNearestThenPrimary } from "../db/sessions";
import type { ProjectStatus, Role } from "./roles";

/** What a chat needs to know of its project to run a task: whether it may, and whose credits pay. */
export type ProjectState = { status: ProjectStatus; ownerAccountId: string };
export type ProjectAccess = { projectId: string; accountId: string; role: Role; project: Seen<ProjectState> };
type Membership = { role: Role } & ProjectState;

// Read-mostly: a few seconds of reuse is harmless, and during a D1 outage the last value seen serves for 15 minutes.
export const ACCESS_FRESH_MS = 5_000;
export const ACCESS_STALE_MS = 15 * 60_000;
const options = { freshMs: ACCESS_FRESH_MS, staleMs: ACCESS_STALE_MS };
const memberships = new ReadMostly<Membership | null>("membership", options);
const projectStates = new ReadMostly<ProjectState | null>("project", options);

function readMembership(d1: D1Database, projectId: string, accountId: string): Promise<Seen<Membership | null>> {
  return memberships.get(`${projectId}\n${accountId}`, async () => {
    const row = await readNearestThenPrimary(d1, async (db) => {
      const [found] = await drizzle(db)
        .select({ role: projectMembers.role, ownerAccountId: projects.ownerAccountId, status: projects.status })
        .from(projectMembers)
        .innerJoin(projects, eq(projects.id, projectMembers.projectId))
        .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId)));
      return found;
    });
    return row ?? null;
  });
}

/** The account's access to the project; null when unknown, suspended or not a member (the caller answers 404, revealing nothing). */
export async function projectAccess(d1: D1Database, projectId: string, accountId: string): Promise<ProjectAccess | null> {
  const { value, at } = await readMembership(d1, projectId, accountId);
  if (!value) return null;
  const project = { value: { status: value.status, ownerAccountId: value.ownerAccountId }, at };
  // The same read says what the project's chats need to know (suspended too); they need not read it again.
  projectStates.offer(projectId, project);
  if (value.status !== "active") return null;
  return { projectId, accountId, role: value.role, project };
}

/** The project's status and owner, or null when there is no such project. */
export async function projectState(d1: D1Database, projectId: string): Promise<Seen<ProjectState | null>> {
  return projectStates.get(projectId, async () => {
    const row = await readNearestThenPrimary(d1, async (db) => {
      const [found] = await drizzle(db).select({ status: projects.status, ownerAccountId: projects.ownerAccountId }).from(projects).where(eq(projects.id, projectId));
      return found;
    });
    return row ?? null;
  });
}

/** Keeps what the calling Worker knew of the project (a chat object may live in an isolate that has not read it). */
export const offerProjectState = (projectId: string, seen: Seen<ProjectState>) => projectStates.offer(projectId, seen);

/** Forgets cached memberships and project states so an admin change is seen at once by the instance that made it. */
export function forgetMemberships(): void {
  memberships.forget();
  projectStates.forget();
}
