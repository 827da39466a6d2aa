import { DatabaseUnavailable } from "../../db/errors";
import { projectState } from "../../projects/access";
import { maintenanceFlag } from "../maintenance";

/** Whether a chat may dispatch its next submission now, and whose credits pay for it. */
export type DispatchDecision = { kind: "go"; ownerAccountId: string } | { kind: "hold" } | { kind: "unknown" };

/**
 * Queued submissions wait during maintenance and while their project is suspended (nothing runs or
 * is charged then). Both are read-mostly copies; when D1 cannot say and no recent copy is held, the
 * answer is "unknown" and the chat looks again later rather than fail.
 */
export async function dispatchDecision(d1: D1Database, projectId: string): Promise<DispatchDecision> {
  try {
    const [maintenance, project] = await Promise.all([maintenanceFlag(d1), projectState(d1, projectId)]);
    if (maintenance.value || project.value?.status !== "active") return { kind: "hold" };
    return { kind: "go", ownerAccountId: project.value.ownerAccountId };
  } catch (error) {
    if (error instanceof DatabaseUnavailable) return { kind: "unknown" };
    throw error;
  }
}
