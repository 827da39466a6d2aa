/** What the chat sends to an agent, and what comes back. Adapters: local (built in) and http. */
export type AgentTask = {
  taskId: string;
  chatId: string;
  projectId: string;
  content: string;
  replyToMessageId: string | null;
  callbackUrl: string | null;
};

/** A task's outcome; error explains a failure the agent did not report itself (no answer, bad answer). */
export type AgentResult = { status: "success" | "failed"; content: string; error?: string };

/** The answer to starting a task: a result at once, or a time at which to look again. */
export type AgentStart = { kind: "finished"; result: AgentResult } | { kind: "pending"; checkAt: number };

export interface AgentPort {
  start(task: AgentTask, now: number): Promise<AgentStart>;
  /** Called when a pending task's checkAt has come: its result, or a new time to look again. */
  check(task: AgentTask, startedAt: number, now: number): AgentResult | { checkAt: number };
}
