import { type Artifact, type Message as A2AMessage, type Part, Role, type Task, TaskState } from "@a2a-js/sdk";
import type { ChainState, ChainAsTask } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import { QUESTION_EXTENSION, USAGE_EXTENSION } from "./card";
import { invalid } from "./errors";
import type { TaskRef } from "./task-locator";

// At most this many history entries on a task (the newest).
const HISTORY_MAX = 100;

const STATES: Record<Exclude<ChainState, "awaiting">, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  refused: TaskState.TASK_STATE_REJECTED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

/** The A2A state of a chain's state: waiting on a connection is AUTH_REQUIRED, on any other question INPUT_REQUIRED. */
export const a2aStateOf = (state: ChainState, question: Pick<Question, "kind"> | null | undefined): TaskState =>
  state === "awaiting" ? (question?.kind === "connection" ? TaskState.TASK_STATE_AUTH_REQUIRED : TaskState.TASK_STATE_INPUT_REQUIRED) : STATES[state];

/** The A2A state of a chain. */
export const taskStateOf = (task: ChainAsTask): TaskState => a2aStateOf(task.chain.state, task.chain.question);

const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);
/** Whether a task has ended for good (a question's wait is not an end: an answer goes on with it). */
export const isTerminal = (state: TaskState) => TERMINAL.has(state);
/** Whether a task stops where it is until someone acts: ended, or waiting on a question. */
export const isInterrupted = (state: TaskState) => isTerminal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED;

const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" });

/** A question as words: the prompt, then a choice's options one per line as "<id>. <label>". */
function questionText(question: Question): string {
  const options = question.kind === "choice" ? (question.options ?? []).map((option) => `${option.id}. ${option.label}`) : [];
  return [question.prompt, ...options].join("\n");
}

/** The agent's message that asks a question: the prompt as text, and the Question itself as a data part. */
export function questionMessage(question: Question, taskId: string, contextId: string): A2AMessage {
  return {
    messageId: question.id,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [
      textPart(questionText(question)),
      { content: { $case: "data", value: question }, metadata: { [QUESTION_EXTENSION]: { questionId: question.id } }, filename: "", mediaType: "application/json" },
    ],
    metadata: undefined,
    extensions: [QUESTION_EXTENSION],
    referenceTaskIds: [],
  };
}

/** What the task's status says in words: the question it waits on, or why it could not start. */
function statusMessage(task: ChainAsTask): A2AMessage | undefined {
  const { question, state, rootId, end } = task.chain;
  if (question && (state === "awaiting" || state === "completed")) return questionMessage(question, rootId, task.contextId);
  if (state === "refused" && end.failure) return agentMessage(task, end.id, end.failure.message);
  return undefined;
}

/** A message of the agent in the task (a refusal's reason, say). */
export function agentMessage(task: ChainAsTask, messageId: string, text: string): A2AMessage {
  return {
    messageId,
    contextId: task.contextId,
    taskId: task.chain.rootId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What the task cost so far: its ended replies' credits and tokens, and why it could not start. */
export function usageOf(task: ChainAsTask): Record<string, unknown> {
  const ended = task.steps.map((step) => step.reply?.usage).filter((usage) => usage != null);
  const sum = (pick: (usage: (typeof ended)[number]) => number | null) => {
    const counted = ended.map(pick).filter((n): n is number => n !== null);
    return counted.length === 0 ? null : counted.reduce((a, b) => a + b, 0);
  };
  return {
    credits: ended.reduce((total, usage) => total + usage.credits, 0),
    inputTokens: sum((usage) => usage.inputTokens),
    outputTokens: sum((usage) => usage.outputTokens),
    failure: task.chain.end.failure,
  };
}

/** One artifact per reply of the task, in order: a working reply's text so far. */
export const replyArtifact = (replyId: string, text: string): Artifact => ({
  artifactId: replyId,
  name: "reply",
  description: "",
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
});

/** The user's messages (those A2A sent as they were sent) and the agent's question, oldest first. */
function historyOf(task: ChainAsTask, sent: Map<string, A2AMessage>): A2AMessage[] {
  const history: A2AMessage[] = [];
  for (const step of task.steps) {
    const user = step.userMessage;
    const asSent = sent.get(step.submission.id);
    if (asSent) history.push(asSent);
    else if (user) {
      history.push({
        messageId: user.id,
        contextId: task.contextId,
        taskId: task.chain.rootId,
        role: Role.ROLE_USER,
        parts: [textPart(user.content)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      });
    }
  }
  const status = statusMessage(task);
  if (status) history.push(status);
  return history;
}

export type TaskShapeOptions = { historyLength?: number; includeArtifacts?: boolean; metadata?: Record<string, unknown>; sent?: Map<string, A2AMessage> };

/** The A2A Task of a chain: its state and when it was entered, its replies as artifacts, its history, its chat (for /v1) and what it cost. */
export function taskOf(task: ChainAsTask, { historyLength, includeArtifacts = true, metadata = {}, sent = new Map() }: TaskShapeOptions = {}): Task {
  const history = historyLength === 0 ? [] : historyOf(task, sent).slice(-Math.min(historyLength ?? HISTORY_MAX, HISTORY_MAX));
  return {
    id: task.chain.rootId,
    contextId: task.contextId,
    status: { state: taskStateOf(task), message: statusMessage(task), timestamp: new Date(task.enteredAt).toISOString() },
    artifacts: includeArtifacts ? task.steps.flatMap((step) => (step.reply ? [replyArtifact(step.reply.id, step.reply.content)] : [])) : [],
    history,
    metadata: { ...metadata, chatId: task.chatId, [USAGE_EXTENSION]: usageOf(task) },
  };
}

/** A task just accepted, as its send left it: queued (SUBMITTED) or started (WORKING), its message as sent, nothing spent. */
export function acceptedTask(ref: TaskRef, contextId: string, disposition: "queued" | "started", options: TaskShapeOptions): Task {
  const history = options.historyLength === 0 ? [] : [...ref.sent.values()];
  return {
    id: ref.taskId,
    contextId,
    status: { state: disposition === "queued" ? TaskState.TASK_STATE_SUBMITTED : TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history,
    metadata: { chatId: ref.chatId, [USAGE_EXTENSION]: { credits: 0, inputTokens: null, outputTokens: null, failure: null } },
  };
}

/** A request's historyLength: absent, or a non-negative integer (else -32602). */
export const historyLengthOf = (value: number | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0) throw invalid("historyLength", "must be a non-negative integer.");
  return value;
};
