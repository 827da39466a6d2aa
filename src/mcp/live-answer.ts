import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { declaresTasks } from "./tasks";

// The tools whose calls may wait for a reply (both send through sendThenWait), or answer a task.
export const WAITING_TOOLS = new Set(["send_message", "answer_question"]);

/** How a tools/call answers: `wait` when it may wait for a reply (waitSeconds above 0), `progress` when it also asked for progress. */
export function callShape(message: JSONRPCMessage, tasksOffered = false, elicitingSession = false): { wait: boolean; progress: boolean } {
  // A listen's acknowledgement goes out before its result, so it is an event stream.
  if ("method" in message && message.method === "subscriptions/listen" && "id" in message) return { wait: false, progress: true };
  if (!("method" in message) || message.method !== "tools/call" || !("id" in message)) return { wait: false, progress: false };
  const params = message.params as { name?: unknown; arguments?: { waitSeconds?: unknown }; _meta?: { progressToken?: unknown } } | undefined;
  // A call that answers a task never waits.
  const wait = typeof params?.name === "string" && WAITING_TOOLS.has(params.name) && Number(params.arguments?.waitSeconds ?? 0) > 0 && !(tasksOffered && declaresTasks(params));
  // A call of an eliciting session may send elicitation/create while it waits: an event stream, as for progress.
  return { wait, progress: wait && (params?._meta?.progressToken !== undefined || elicitingSession) };
}
