import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { settings } from "../db/schema";

// The send path's copy: the alarm re-reads D1 before every dispatch, so a stale value here can
// only mislabel a disposition for a moment, never run a task during maintenance.
const TTL_MS = 2_000;
let cached: { value: boolean; at: number } | undefined;

/** The maintenance flag as stored in D1 now. */
export async function readMaintenance(d1: D1Database): Promise<boolean> {
  const [row] = await drizzle(d1).select({ value: settings.value }).from(settings).where(eq(settings.key, "maintenance"));
  return row?.value === "on";
}

/** The maintenance flag, read from D1 at most once per TTL in this isolate. */
export async function cachedMaintenance(d1: D1Database): Promise<boolean> {
  const now = Date.now();
  if (cached && now - cached.at < TTL_MS) return cached.value;
  const value = await readMaintenance(d1);
  cached = { value, at: now };
  return value;
}

/** Turns maintenance on or off; this isolate sees the change at once. */
export async function setMaintenance(d1: D1Database, enabled: boolean): Promise<void> {
  const value = enabled ? "on" : "off";
  await drizzle(d1).insert(settings).values({ key: "maintenance", value }).onConflictDoUpdate({ target: settings.key, set: { value } });
  cached = undefined;
}
