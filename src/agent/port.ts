/** What the chat sends to an agent, and what comes back. Adapters: local (built in) and http. */
export type AgentTask = {
  taskId: string;
  chatId: string;
  projectId: string;
  content: string;
  replyToMessageId: string | null;
  callbackUrl: string | null;
  // Where an http agent takes the steering texts sent while it works (docs/agent-protocol.md).
  steeringUrl: string | null;
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

/** Where a running task stands when its checkAt has come, and what the chat lets the agent do at that step. */
export type TaskStep = {
  startedAt: number;
  now: number;
  /** The length of the reply so far. */
  written: number;
  /** Takes the steering texts waiting for the task (in order, within the chat's cap); returns every text the task has taken. */
  takeSteering(): string[];
};

export interface AgentPort {
  start(task: AgentTask, now: number): Promise<AgentStart>;
  /** Called when a pending task's checkAt has come. */
  check(task: AgentTask, step: TaskStep): AgentResult | AgentProgress;
  /** The user stopped the task; the chat has recorded its end already, so this only tells the agent (best effort, never throws). */
  stop(task: AgentTask): Promise<void>;
}
