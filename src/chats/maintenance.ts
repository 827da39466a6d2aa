import { isMaintenance } from "./credits";

// Read with the membership on the send path; the alarm re-reads D1 before every dispatch, so a stale
// value here can only mislabel a disposition for a moment, never run a task during maintenance.
const TTL_MS = 2_000;
let cached: { value: boolean; at: number } | undefined;

export async function maintenanceFlag(d1: D1Database): Promise<boolean> {
  const now = Date.now();
  if (cached && now - cached.at < TTL_MS) return cached.value;
  const value = await isMaintenance(d1);
  cached = { value, at: now };
  return value;
}

export function forgetMaintenanceFlag(): void {
  cached = undefined;
}
