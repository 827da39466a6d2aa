import { DurableObject } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { ReadMostly, type Seen } from "../db/read-mostly";
import { settings } from "../db/schema";
import { primary } from "../db/sessions";
import type { Env } from "../env";

/** What a send is told (started or queued) reads the flag at most once this often per isolate; dispatches read the switch itself. */
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

/**
 * Turns maintenance on or off: the switch first, which every dispatch reads, so no task starts (and
 * nothing is charged) once this returns; then the flag in D1, which sends read (this isolate at once,
 * others within MAINTENANCE_FRESH_MS) to say whether they start or wait.
 */
export async function setMaintenance(env: Env, enabled: boolean): Promise<void> {
  await maintenanceSwitch(env).set(enabled);
  const value = enabled ? "on" : "off";
  await drizzle(env.DB).insert(settings).values({ key: KEY, value }).onConflictDoUpdate({ target: settings.key, set: { value } });
  flag.forget();
}

/** The one switch of the deployment (a single object): read by every dispatch. */
export const maintenanceSwitch = (env: Env) => env.MAINTENANCE_SWITCH.getByName("maintenance");

/**
 * Whether maintenance holds dispatches, as the operator last set it: one object for the deployment,
 * so a dispatch that reads it after `setMaintenance` returned reads the new value (no cached copy can
 * be stale). A deployment from before it starts from the D1 flag.
 */
export class MaintenanceSwitch extends DurableObject<Env> {
  private enabled: boolean | undefined;

  async set(enabled: boolean): Promise<void> {
    this.ctx.storage.kv.put("enabled", enabled);
    this.enabled = enabled;
  }

  async holds(): Promise<boolean> {
    if (this.enabled === undefined) {
      const stored = this.ctx.storage.kv.get<boolean>("enabled");
      this.enabled = stored ?? (await maintenanceFlag(this.env.DB)).value;
    }
    return this.enabled;
  }
}
