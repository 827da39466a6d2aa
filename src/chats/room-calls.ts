import type { Answer } from "../agent/question-shapes";
import type { Seen } from "../db/read-mostly";
import type { JsonText } from "../http/router";
import type { ProjectState } from "../projects/access";
import type { Chain, ChainState, ChainAsTask } from "./chain-schemas";
import type { Question, QuestionStatus } from "./question-schemas";
import type { Chat, IfBusy, Message, QueueEntry, Submission, SubmissionState } from "./schemas";

/** What the Worker asks the chat object over RPC and what it answers: the routes read this, never the object's own files. */

/** The comment a credential's own streams get when an answer it sent from an MCP form was refused: `answer-refused <questionId> <problem as base64url>`. */
export const ANSWER_REFUSED = "answer-refused";

/** Every answer's way of saying the chat is not in the project asked about (or does not exist): the routes map it to 404 in one place. */
export type NotHere = { kind: "not_found" };

/** What the Worker knew when it took the request: the object keeps it, so a task can run even where D1 cannot be read. */
type SeenByWorker = { maintenance: Seen<boolean>; project: Seen<ProjectState> };
/** A send (with what it does on a busy chat) or steer of a text, or an answer to a question (a send whose text is the answer in words). */
export type Submitted = { idempotencyKey: string } & (
  | { kind: "send"; content: string; replyToMessageId: string | null; ifBusy: IfBusy }
  | { kind: "steer"; content: string; replyToMessageId: string | null }
  | { kind: "answer"; questionId: string; answer: Answer }
);
/** The credential making a submission: its TokenGate's name (its task's credits count there), and whether its credit limit was reached when it was admitted. */
type SubmittingCredential = { gateName: string; atCreditLimit: boolean };
export type SubmitRequest = Submitted & { seen: SeenByWorker; credential: SubmittingCredential };
export type SubmitOutcome =
  | { kind: "accepted"; submission: Submission; replayed: boolean }
  | { kind: "question_not_found" }
  | { kind: "question_not_pending"; status: QuestionStatus }
  | { kind: "answer_does_not_fit"; why: string }
  | { kind: "key_reused" }
  | { kind: "cancelled" }
  | { kind: "archived" }
  | { kind: "unknown_reply_target" }
  | { kind: "queue_full" }
  | { kind: "chat_busy" }
  | { kind: "credit_limit" }
  | NotHere;
/** eventId: the newest event whose effects the answer shows (read in the same synchronous stretch), for Chat-Event-Id. */
export type MessagesOutcome = { kind: "page"; items: Message[]; nextCursor: string | null; eventId: number } | { kind: "bad_cursor" } | NotHere;
export type MessageOutcome = { kind: "message"; message: Message } | { kind: "message_not_found" } | NotHere;
/** A message read with the newest event id whose effects it shows, for Chat-Event-Id. */
export type MessageRead = { kind: "message"; message: Message; eventId: number } | { kind: "message_not_found" } | NotHere;
export type CancelOutcome = { kind: "cancelled" } | { kind: "started" } | { kind: "submission_not_found" } | NotHere;
// The chain as JSON text: its question's action input is any JSON, which RPC's types cannot name.
export type ChainOutcome = { kind: "chain"; chain: JsonText<Chain> } | { kind: "submission_not_found" } | NotHere;
/** A chain as a task, with the newest event id whose effects it shows (a channel's stream resumes after it). */
export type ChainTaskOutcome = { kind: "task"; task: JsonText<ChainAsTask>; eventId: number } | { kind: "submission_not_found" } | NotHere;
export type ChainTasksOutcome = { kind: "tasks"; tasks: JsonText<ChainAsTask[]>; eventId: number } | NotHere;
export type SubmissionOutcome = { kind: "submission"; submission: SubmissionState } | { kind: "submission_not_found" } | NotHere;
// The question as JSON text: an action's input is any JSON, which RPC's types cannot name.
export type QuestionOutcome = { kind: "question"; question: JsonText<Question> } | { kind: "question_not_found" } | NotHere;
/** The chat as it stands (after a rename or an archive), with the newest event id whose effects it shows. */
export type ChatRead = { kind: "chat"; chat: Chat; eventId: number } | NotHere;
export type QueueRead = { kind: "queue"; items: QueueEntry[]; eventId: number } | NotHere;
/** A live event stream of the chat. */
export type Followed = { kind: "stream"; stream: ReadableStream<Uint8Array> } | NotHere;

/** An A2A push config as the chat keeps it: the token and credentials sealed by the Worker (never read back), and the body's protocol. */
export type NewPushConfig = { id: string; url: string; scheme: string | null; sealed: string | null; hasToken: boolean; protocol: "1.0" | "0.3" };
/** A push config as it is shown: no token, no credentials. */
export type PushConfigView = { id: string; taskId: string; url: string; scheme: string | null };
export type PushConfigOutcome =
  | { kind: "set"; config: PushConfigView }
  | { kind: "configs"; configs: PushConfigView[] }
  | { kind: "removed" }
  | { kind: "task_limit" }
  | { kind: "project_limit" }
  | { kind: "ended" }
  | { kind: "submission_not_found" }
  | NotHere;
/** What one push attempt needs from the chat: its config, the state the event told (when it was entered), the question it waited on, the task now. */
export type PushDeliveryRead = Omit<NewPushConfig, "id"> & {
  told: { state: ChainState; at: number };
  question: JsonText<Question> | null;
  task: JsonText<ChainAsTask>;
};

/** A task as the project's task index keeps it: its state (and the kind of question it waits on), and since when (ms). */
export type IndexedTask = { taskId: string; state: ChainState; asks: string | null; at: number };

// Forking a chat (room/forks.ts): what the source and the fork are asked, and what they answer.
/** What a fork asks of its source: a plan (its key claimed, its point checked), or the next batch of messages to copy. */
export type ForkAsk =
  | { kind: "plan"; key: string; fingerprint: string; atMessageId: string; rerun: boolean; title: string | undefined; creditLimited: boolean }
  | { kind: "batch"; afterSeq: number; throughSeq: number };

/** A fork to make (or made: replayed): its chat, what it copies (the source's messages through a seq), its title and origin, the text a rerun sends. */
type ForkPlan = {
  kind: "plan";
  forkChatId: string;
  replayed: boolean;
  throughSeq: number;
  title: string;
  forkedFrom: NonNullable<Chat["forkedFrom"]>;
  rerunContent: string | null;
};
type CopiedMessage = Pick<Message, "role" | "content" | "status" | "createdAt">;
/** Messages to copy, in order, and the seq of the last; `done` when none is left through the plan's seq. */
export type ForkBatch = { kind: "batch"; messages: CopiedMessage[]; lastSeq: number; done: boolean };
/** What a plan is answered: the plan, or why the chat may not be forked so. */
export type ForkPlanOutcome =
  | ForkPlan
  | { kind: "fork_key_reused" }
  | { kind: "unknown_fork_point" }
  | { kind: "rerun_not_a_task_start" }
  | { kind: "message_working" }
  | { kind: "fork_too_long" }
  | { kind: "credit_limit" };

/** A fork's own side: the batch after `afterSeq` (the first makes the chat, with its title and origin), copied once. */
export type ForkFill = { title: string; forkedFrom: NonNullable<Chat["forkedFrom"]>; afterSeq: number; batch: ForkBatch };
/** How far a fork's copy has come: the source's last copied seq, or null once it is whole. */
export type ForkProgress = { copiedSeq: number | null };
export type ForkSourceOutcome = ForkPlanOutcome | ForkBatch;
