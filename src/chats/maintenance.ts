import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { ReadMostly, type Seen } from "../db/read-mostly";
import { settings } from "../db/schema";
import { primary } from "../db/sessions";

/**
 * Read at most once this often per isolate. Turning maintenance on waits this long before it
 * answers, so once the call returns no copy anywhere still says "off".
 */
export const MAINTENANCE_FRESH_MS = 2_000;
const flag = new ReadMostly<boolean>("maintenance", { freshMs: MAINTENANCE_FRESH_MS, staleMs: 15 * 60_000, maxEntries: 1 });
const KEY = "maintenance";

/** The maintenance flag, from this isolate's copy while fresh; read from the primary, which has the latest write. */
export function maintenanceFlag(d1: D1Database): Promise<Seen<boolean>> {
  return flag.get(KEY, async () => {
    const [row] = await drizzle(primary(d1)).select({ value: settings.value }).from(settings).where(eq(settings.key, KEY));
    return row?.value === "on";
  });
}

/** Keeps what the calling Worker knew of the flag, when newer than this isolate's copy. */
export const offerMaintenanceFlag = (seen: Seen<boolean>) => flag.offer(KEY, seen);

/** Turns maintenance on or off; this isolate sees the change at once, others within MAINTENANCE_FRESH_MS. */
export async function setMaintenance(d1: D1Database, enabled: boolean): Promise<void> {
  const value = enabled ? "on" : "off";
  await drizzle(d1).insert(settings).values({ key: KEY, value }).onConflictDoUpdate({ target: settings.key, set: { value } });
  flag.forget();
}
