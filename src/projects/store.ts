import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isForeignKeyViolation, isUniqueViolation } from "../db/errors";
import { projectMembers, projects } from "../db/schema";
import { ApiError } from "../http/problem";

export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export type ProjectStatus = "active" | "suspended";
const view = (p: typeof projects.$inferSelect) => ({ id: p.id, name: p.name, ownerAccountId: p.ownerAccountId, status: p.status });

/** Creates the project with its owner as the first member, in one transaction. */
export async function createProject(d1: D1Database, input: { id?: string; name: string; ownerAccountId: string }) {
  const db = drizzle(d1);
  const row = { id: (input.id ?? crypto.randomUUID()).toLowerCase(), name: input.name, ownerAccountId: input.ownerAccountId, status: "active" as const, createdAt: new Date().toISOString() };
  try {
    await db.batch([
      db.insert(projects).values(row),
      db.insert(projectMembers).values({ projectId: row.id, accountId: row.ownerAccountId, role: "owner" }),
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError(409, "conflict", "A project with this id already exists.");
    if (isForeignKeyViolation(error)) throw new ApiError(400, "invalid_request", "ownerAccountId does not name an account.", { errors: [{ path: "ownerAccountId", message: "no such account" }] });
    throw error;
  }
  return view(row);
}

export async function setProjectStatus(d1: D1Database, id: string, status: ProjectStatus) {
  const [row] = await drizzle(d1).update(projects).set({ status }).where(eq(projects.id, id)).returning();
  if (!row) throw new ApiError(404, "not_found", "No project has this id.");
  return view(row);
}

/** The project's status, or undefined when there is no such project. */
export async function projectStatus(d1: D1Database, id: string): Promise<ProjectStatus | undefined> {
  const [row] = await drizzle(d1).select({ status: projects.status }).from(projects).where(eq(projects.id, id));
  return row?.status;
}

/** Adds a member or changes a role; the owner's own role is not changed here, or the project would lose its writer. */
export async function setMember(d1: D1Database, projectId: string, accountId: string, role: Role) {
  const db = drizzle(d1);
  const [project] = await db.select({ owner: projects.ownerAccountId }).from(projects).where(eq(projects.id, projectId));
  if (project?.owner === accountId && role !== "owner") {
    throw new ApiError(409, "conflict", `This account owns the project; its role stays owner. Give ${role} to another account, or transfer the project first.`);
  }
  try {
    await db
      .insert(projectMembers)
      .values({ projectId, accountId, role })
      .onConflictDoUpdate({ target: [projectMembers.projectId, projectMembers.accountId], set: { role } });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw new ApiError(404, "not_found", "No such project or account.");
    throw error;
  }
  return { projectId, accountId, role };
}

export async function removeMember(d1: D1Database, projectId: string, accountId: string) {
  const db = drizzle(d1);
  const [project] = await db.select({ owner: projects.ownerAccountId }).from(projects).where(eq(projects.id, projectId));
  if (project?.owner === accountId) throw new ApiError(409, "conflict", "The project's owner stays a member; transfer the project first.");
  const removed = await db.delete(projectMembers).where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId))).returning();
  if (removed.length === 0) throw new ApiError(404, "not_found", "This account is not a member of this project.");
}
