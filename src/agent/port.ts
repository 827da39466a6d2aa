/** What the chat sends to an agent, and what comes back. Adapters: local (built in) and http. */
export type AgentTask = {
  taskId: string;
  chatId: string;
  projectId: string;
  content: string;
  replyToMessageId: string | null;
  callbackUrl: string | null;
};

/**
 * A task's outcome; error explains a failure the agent did not report itself (no answer, bad answer).
 * awaitingUser: the agent asked the user something (a question, a connection request in the web application).
 */
export type AgentResult = { status: "success" | "failed"; content: string; error?: string; awaitingUser?: boolean };

/** The answer to starting a task: a result at once, or a time at which to look again. */
type AgentStart = { kind: "finished"; result: AgentResult } | { kind: "pending"; checkAt: number };

/** A task still running: when to look again, and text to append to its reply meanwhile. */
type AgentProgress = { checkAt: number; append?: string };

export interface AgentPort {
  start(task: AgentTask, now: number): Promise<AgentStart>;
  /** Called when a pending task's checkAt has come; `written` is the length of the reply so far. */
  check(task: AgentTask, startedAt: number, now: number, written: number): AgentResult | AgentProgress;
}
