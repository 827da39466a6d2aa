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
 * Turns maintenance on or off: the switch first, which every dispatch reads (turned on, it answers once no isolate may
 * still dispatch on its earlier word), so no task starts (and nothing is charged) once this returns; then the flag in
 * D1, which sends read (this isolate at once, others within MAINTENANCE_FRESH_MS) to say whether they start or wait.
 * Answers whether maintenance is on once it returns.
 */
export async function setMaintenance(env: Env, enabled: boolean): Promise<boolean> {
  // The flag follows the switch as it stands once set answers: a call that turned it off while this one waited wins.
  const enabledNow = await maintenanceSwitch(env).set(enabled);
  const value = enabledNow ? "on" : "off";
  await drizzle(env.DB).insert(settings).values({ key: KEY, value }).onConflictDoUpdate({ target: settings.key, set: { value } });
  flag.forget();
  return enabledNow;
}

/** The one switch of the deployment (a single object). */
export const maintenanceSwitch = (env: Env) => env.MAINTENANCE_SWITCH.getByName("maintenance");

/**
 * How long an isolate may go on dispatching on the switch's word that maintenance is off, without asking again;
 * turning maintenance on waits until every such word it gave is spent, so a busy chat asks about once per lease, not
 * once per task.
 */
export const MAINTENANCE_LEASE_MS = 2_000;
// A Worker's clock stands still while its code runs: this isolate trusts a lease this much less than the switch counts it.
const LEASE_MARGIN_MS = 500;
// This isolate may dispatch without asking until then (counted from before it asked, so it never outlives the switch's count).
let offUntil = 0;

/** Whether maintenance holds dispatches: the switch's word, or this isolate's lease that it is off while one runs. */
export async function maintenanceHolds(env: Env): Promise<boolean> {
  const asked = Date.now();
  if (asked < offUntil) return false;
  const holds = await maintenanceSwitch(env).holds();
  if (!holds) offUntil = Math.max(offUntil, asked + MAINTENANCE_LEASE_MS - LEASE_MARGIN_MS);
  return holds;
}

/**
 * Whether maintenance holds dispatches, as the operator last set it: one object for the deployment. An answer that it
 * is off is a lease (MAINTENANCE_LEASE_MS): turning it on returns only once every lease given has run out, so a
 * dispatch that starts after `setMaintenance` returned reads the new value. A deployment from before it starts from
 * the D1 flag.
 */
export class MaintenanceSwitch extends DurableObject<Env> {
  private enabled: boolean | undefined;
  // The last lease given may run until then; after a restart, one may have been given just before it.
  private leasedUntil = Date.now() + MAINTENANCE_LEASE_MS;

  /** Sets the switch; turned on, it answers once every lease given has run out. Answers the switch as it then stands. */
  async set(enabled: boolean): Promise<boolean> {
    this.ctx.storage.kv.put("enabled", enabled);
    this.enabled = enabled;
    // This isolate's own lease goes at once (the object shares it with chats here, and with tests).
    offUntil = 0;
    const leaseLeft = this.leasedUntil - Date.now();
    if (enabled && leaseLeft > 0) await scheduler.wait(Math.min(leaseLeft, MAINTENANCE_LEASE_MS));
    return this.enabled;
  }

  async holds(): Promise<boolean> {
    if (this.enabled === undefined) {
      const stored = this.ctx.storage.kv.get<boolean>("enabled");
      this.enabled = stored ?? (await maintenanceFlag(this.env.DB)).value;
    }
    if (!this.enabled) this.leasedUntil = Math.max(this.leasedUntil, Date.now() + MAINTENANCE_LEASE_MS);
    return this.enabled;
  }
}
