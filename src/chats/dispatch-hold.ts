import { projectStatus } from "../projects/store";
import { readMaintenance } from "./maintenance";

/**
 * True while a chat's queued submissions must wait: during maintenance, or while its project is
 * suspended (nothing runs or is charged then). Read fresh from D1 before every dispatch.
 */
export async function dispatchOnHold(d1: D1Database, projectId: string): Promise<boolean> {
  const [maintenance, status] = await Promise.all([readMaintenance(d1), projectStatus(d1, projectId)]);
  return maintenance || status === "suspended";
}
