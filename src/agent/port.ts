import type { AskedQuestion } from "./asked-question";
import type { Turn } from "./conversation";
import type { Answer, QuestionKind } from "./question-shapes";

/** What the chat sends to an agent, and what comes back. Adapters: local (built in), http, and model (openai, workers-ai). */
export type AgentTask = {
  taskId: string;
  chatId: string;
  projectId: string;
  content: string;
  replyToMessageId: string | null;
  callbackUrl: string | null;
  // Where an http agent takes the steering texts sent while it works (docs/agent-protocol.md).
  steeringUrl: string | null;
  /** The question this task's message answers, and how (an ordinary send that answered: its text); null when it answers none. */
  answer: TaskAnswer | null;
};

/** What a task's message answered: the question, its kind, and the answer's fields as sent. */
export type TaskAnswer = { questionId: string; kind: QuestionKind } & Answer;

/**
 * A task's outcome; error explains a failure the agent did not report itself (no answer, bad answer).
 * question: what a successful task asks the user; awaitingUser alone asks a text question with the reply's words.
 */
export type AgentResult = {
  status: "success" | "failed";
  /** The reply's final text; absent, what was written stands (a failure of the service's own keeps the partial reply). */
  content?: string;
  error?: string;
  awaitingUser?: boolean;
  question?: AskedQuestion;
  usage?: TokenUsage;
};

/** A model's own token counts for one or more calls (prompt and completion tokens). */
export type TokenUsage = { inputTokens: number; outputTokens: number };

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

/**
 * What the chat lets an agent that runs inside its object (a model) do while the task runs. Every
 * call is a no-op once the task has ended (stopped, timed out): append then answers false.
 */
export type LiveTask = {
  /** The chat's earlier user messages and replies, newest first, read only as far as the caller iterates. */
  earlierTurns(): Iterable<Turn>;
  /** The message the task answers, its reply target quoted. */
  prompt(): string;
  /** The reply so far. */
  reply(): string;
  /** Appends to the reply; false when the task no longer runs or the reply is full (stop writing). */
  append(text: string): boolean;
  /** Takes the steering texts waiting for the task (within the chat's cap); returns the ones taken now. */
  takeSteering(): string[];
  /** Adds what one finished model call reported, so a task stopped later still shows the calls it made. */
  addUsage(usage: TokenUsage): void;
  finish(result: AgentResult): Promise<void>;
};

export interface AgentPort {
  /** Whether tasks run in the object's memory, so a task found running after a restart has lost its work. */
  readonly live?: boolean;
  start(task: AgentTask, now: number, live?: LiveTask): Promise<AgentStart>;
  /** Called when a pending task's checkAt has come. */
  check(task: AgentTask, step: TaskStep): AgentResult | AgentProgress;
  /** The user stopped the task; the chat has recorded its end already, so this only tells the agent (best effort, never throws). */
  stop(task: AgentTask): Promise<void>;
  /** The task's deadline passed and the chat failed it: drop whatever still works on it. */
  abandon?(task: AgentTask): void;
}
