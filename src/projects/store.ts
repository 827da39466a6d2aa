import { and, asc, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isForeignKeyViolation, isUniqueViolation } from "../db/errors";
import { readNearestThenPrimary } from "../db/sessions";
import { projectMembers, projects } from "../db/schema";
import type { ProjectStatus, Role } from "./roles";

export type ProjectView = { id: string; name: string; ownerAccountId: string; status: ProjectStatus };
const view = (p: typeof projects.$inferSelect): ProjectView => ({ id: p.id, name: p.name, ownerAccountId: p.ownerAccountId, status: p.status });

/** Creates the project with its owner as the first member, in one transaction. */
export async function createProject(
  d1: D1Database,
  input: { id?: string; name: string; ownerAccountId: string },
): Promise<{ kind: "created"; project: ProjectView } | { kind: "id_taken" } | { kind: "no_such_owner" }> {
  const db = drizzle(d1);
  const row = {
    id: (input.id ?? crypto.randomUUID()).toLowerCase(),
    name: input.name,
    ownerAccountId: input.ownerAccountId,
    status: "active" as const,
    createdAt: new Date().toISOString(),
  };
  try {
    await db.batch([db.insert(projects).values(row), db.insert(projectMembers).values({ projectId: row.id, accountId: row.ownerAccountId, role: "owner" })]);
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: "id_taken" };
    if (isForeignKeyViolation(error)) return { kind: "no_such_owner" };
    throw error;
  }
  return { kind: "created", project: view(row) };
}

/** The project after the change; null when there is no such project. */
export async function setProjectStatus(d1: D1Database, id: string, status: ProjectStatus): Promise<ProjectView | null> {
  const [row] = await drizzle(d1).update(projects).set({ status }).where(eq(projects.id, id)).returning();
  return row ? view(row) : null;
}

/** Adds a member or changes a role; the owner's own role is not changed here, or the project would lose its writer. */
export async function setMember(d1: D1Database, projectId: string, accountId: string, role: Role): Promise<"set" | "owner_keeps_role" | "not_found"> {
  const db = drizzle(d1);
  const [project] = await db.select({ owner: projects.ownerAccountId }).from(projects).where(eq(projects.id, projectId));
  if (project?.owner === accountId && role !== "owner") return "owner_keeps_role";
  try {
    await db
      .insert(projectMembers)
      .values({ projectId, accountId, role })
      .onConflictDoUpdate({ target: [projectMembers.projectId, projectMembers.accountId], set: { role } });
  } catch (error) {
    if (isForeignKeyViolation(error)) return "not_found";
    throw error;
  }
  return "set";
}

export async function removeMember(d1: D1Database, projectId: string, accountId: string): Promise<"removed" | "owner_stays" | "not_member"> {
  const db = drizzle(d1);
  const [project] = await db.select({ owner: projects.ownerAccountId }).from(projects).where(eq(projects.id, projectId));
  if (project?.owner === accountId) return "owner_stays";
  const removed = await db
    .delete(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId)))
    .returning();
  return removed.length === 0 ? "not_member" : "removed";
}

/** The active projects the account is a member of, with its role in each, ordered by name (then id, so equal names keep one order). */
export async function memberProjects(d1: D1Database, accountId: string): Promise<{ id: string; name: string; role: Role }[]> {
  const rows = await readNearestThenPrimary(d1, async (db) => {
    const found = await drizzle(db)
      .select({ id: projects.id, name: projects.name, role: projectMembers.role })
      .from(projectMembers)
      .innerJoin(projects, eq(projects.id, projectMembers.projectId))
      .where(and(eq(projectMembers.accountId, accountId), eq(projects.status, "active")))
      .orderBy(asc(projects.name), asc(projects.id));
    // None on a replica may only mean a membership made a moment ago has not reached it: the primary confirms.
    return found.length ? found : undefined;
  });
  return rows ?? [];
}
