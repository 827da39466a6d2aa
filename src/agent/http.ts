import { z } from "zod";
import { AgentQuestion } from "./asked-question";
import type { AgentPort, AgentResult } from "./port";
import { log } from "../log";
import { REPLY_MAX, STEERING_PER_TASK } from "./limits";

const START_TIMEOUT_MS = 15_000;
// Telling the agent of a stop is best effort: one try, this long.
const STOP_TIMEOUT_MS = 5_000;
// Storage keeps a lone surrogate as U+FFFD, so the reply kept would differ from the one given: refused.
const agentText = () => z.string().refine((text) => text.isWellFormed(), "unpaired UTF-16 surrogate");
// Lenient about extra fields, so an agent can add its own without breaking the service.
export const AgentResultBody = z.object({
  status: z.enum(["success", "failed"]),
  content: agentText().max(REPLY_MAX),
  // What the agent asks the user (validated whole: a bad question is no result); awaitingUser alone asks a text question with the reply's words.
  question: AgentQuestion.nullish().transform((question) => question ?? undefined),
  awaitingUser: z.boolean().optional(),
  // The model's token counts for the whole task, when the agent knows them (shown as the reply's usage).
  usage: z
    .object({ inputTokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), outputTokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) })
    .nullish()
    .transform((usage) => usage ?? undefined),
});

/** Text to append to the running task's reply; parts are numbered from 1 so a retried part is not appended twice. */
export const PartialOutputBody = z.object({ seq: z.number().int().min(1).max(1_000_000), text: agentText().min(1).max(REPLY_MAX) });

/** Steering texts the agent has taken, by submission id, in the order it was given them. */
export const SteeringAckBody = z.object({ ids: z.array(z.uuid()).min(1).max(STEERING_PER_TASK) });

/** The task's own address at the agent, `{AGENT_URL}/{taskId}/<action>` (AGENT_URL's query string kept). */
function agentTaskUrl(agentUrl: string, taskId: string, action: string): string {
  const url = new URL(agentUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${taskId}/${action}`;
  return url.toString();
}

/**
 * An external agent (docs/agent-protocol.md): the task is POSTed to AGENT_URL with the shared
 * secret. A 200 carries the result at once; a 202 means the agent will POST it to callbackUrl
 * before the deadline. Anything else, or no answer in time, fails the task. A stop is POSTed to
 * `{AGENT_URL}/{taskId}/stop`; steering texts are the agent's to take from steeringUrl.
 */
export function httpAgent(options: { url: string; secret: string; resultTimeoutMs: number; startTimeoutMs?: number; fetch?: typeof fetch }): AgentPort {
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  return {
    async start(task, now) {
      // A timer cleared once the answer is in, so nothing lingers in the object after the call.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error("the agent did not answer in time.")), options.startTimeoutMs ?? START_TIMEOUT_MS);
      try {
        const response = await send(options.url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${options.secret}` },
          body: JSON.stringify(task),
          signal: abort.signal,
        });
        if (response.status === 202) {
          await response.body?.cancel();
          return { kind: "pending", checkAt: now + options.resultTimeoutMs };
        }
        if (!response.ok) {
          await response.body?.cancel();
          throw new Error(`the agent answered HTTP ${response.status}.`);
        }
        const parsed = AgentResultBody.safeParse(await response.json().catch(() => undefined));
        if (!parsed.success) throw new Error("the agent answered with a body that is not a result.");
        return { kind: "finished", result: parsed.data };
      } finally {
        clearTimeout(timer);
      }
    },
    check(_task, { startedAt, now }): AgentResult | { checkAt: number } {
      const deadline = startedAt + options.resultTimeoutMs;
      if (now < deadline) return { checkAt: deadline };
      // What its parts wrote stays in the reply.
      return { status: "failed", error: `The agent did not send a result within ${Math.round(options.resultTimeoutMs / 1000)} s.` };
    },
    async stop(task) {
      try {
        const response = await send(agentTaskUrl(options.url, task.taskId, "stop"), {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${options.secret}` },
          body: JSON.stringify({ taskId: task.taskId, chatId: task.chatId, projectId: task.projectId, reason: "stopped_by_user" }),
          signal: AbortSignal.timeout(STOP_TIMEOUT_MS),
        });
        await response.body?.cancel();
        if (!response.ok) log.warn("agent_stop_refused", { taskId: task.taskId, status: response.status });
      } catch (error) {
        log.warn("agent_stop_failed", { taskId: task.taskId }, error);
      }
    },
  };
}
