import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { projectMembers, projects } from "../db/schema";
import type { Role } from "./roles";

export type ProjectAccess = { projectId: string; accountId: string; role: Role; ownerAccountId: string };
type Membership = { role: Role; ownerAccountId: string; status: string } | null;

// Membership reads are the one D1 read of the hot path; a few seconds of reuse is harmless.
const MEMBERSHIP_TTL_MS = 5_000;
const memberships = new Map<string, { value: Membership; at: number }>();

async function readMembership(d1: D1Database, projectId: string, accountId: string): Promise<Membership> {
  const key = `${projectId}\n${accountId}`;
  const now = Date.now();
  const hit = memberships.get(key);
  if (hit && now - hit.at < MEMBERSHIP_TTL_MS) return hit.value;
  const [row] = await drizzle(d1)
    .select({ role: projectMembers.role, ownerAccountId: projects.ownerAccountId, status: projects.status })
    .from(projectMembers)
    .innerJoin(projects, eq(projects.id, projectMembers.projectId))
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.accountId, accountId)));
  const value = row ?? null;
  if (memberships.size > 10_000) memberships.clear();
  memberships.set(key, { value, at: now });
  return value;
}

/** The account's access to the project; null when unknown, suspended or not a member (the caller answers 404, revealing nothing). */
export async function projectAccess(d1: D1Database, projectId: string, accountId: string): Promise<ProjectAccess | null> {
  const membership = await readMembership(d1, projectId, accountId);
  if (membership?.status !== "active") return null;
  return { projectId, accountId, role: membership.role, ownerAccountId: membership.ownerAccountId };
}

/** Forgets cached memberships so an admin change is seen at once by the instance that made it. */
export function forgetMemberships(): void {
  memberships.clear();
}
