import { DatabaseUnavailable } from "../../db/errors";
import type { Env } from "../../env";
import { log } from "../../log";
import { projectState } from "../../projects/access";
import { maintenanceHolds } from "../maintenance";

/** Whether a chat may dispatch its next submission now, and whose credits pay for it. */
export type DispatchDecision = { kind: "go"; ownerAccountId: string } | { kind: "hold" } | { kind: "unknown" };

/**
 * Queued submissions wait during maintenance and while their project is suspended (nothing runs or
 * is charged then). Maintenance is the switch's word (an isolate's lease that it is off, see maintenanceHolds); the project's state a
 * read-mostly copy. When either cannot be read (D1 down with no recent copy, the switch unreachable)
 * the answer is "unknown" and the chat looks again later rather than fail.
 */
export async function dispatchDecision(env: Env, projectId: string): Promise<DispatchDecision> {
  try {
    const [maintenance, project] = await Promise.all([maintenanceHolds(env), projectState(env.DB, projectId)]);
    if (maintenance || project.value?.status !== "active") return { kind: "hold" };
    return { kind: "go", ownerAccountId: project.value.ownerAccountId };
  } catch (error) {
    if (error instanceof DatabaseUnavailable) return { kind: "unknown" };
    log.warn("dispatch_decision_unknown", { projectId }, error);
    return { kind: "unknown" };
  }
}
