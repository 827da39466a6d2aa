import { MAX_STREAMS_PER_TOKEN } from "../../auth/token-gate";
import { ApiError, invalidRequest, notFound, unauthorized } from "../../http/problem";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import type { ForkPlanOutcome, SubmitOutcome } from "../room-calls";
import { FORK_LIMITS } from "../limits";

/**
 * Every way the chat service can refuse an operation, by kind. Each channel shows a refusal its own way (REST as
 * problem+json, MCP as a tool error, A2A as its error class), always from the kind and never from text.
 */
export type Refusal =
  // Every way the chat's object refuses a submission (not_found among them), as it says it.
  | Exclude<SubmitOutcome, { kind: "accepted" }>
  | { kind: "message_not_found" }
  | { kind: "reply_not_found" }
  | { kind: "submission_not_found" }
  | { kind: "submission_started" }
  | { kind: "bad_cursor" }
  | { kind: "create_key_reused" }
  // Every way a chat refuses to be forked, as it says it (credit_limit among them, a rerun's).
  | Exclude<ForkPlanOutcome, { kind: "plan" }>
  | { kind: "too_many_streams"; retryAfterSeconds: number }
  | { kind: "credential_gone" };

type Table = { [K in Refusal["kind"]]: (refusal: Extract<Refusal, { kind: K }>) => ApiError };

/** The one table of refusals: each kind's HTTP status, problem code and detail. */
const REFUSALS: Table = {
  not_found: () => notFound("The chat does not exist in this project or is not available to you."),
  message_not_found: () => new ApiError(404, "message_not_found", "This chat has no message with that id."),
  reply_not_found: () => new ApiError(404, "message_not_found", "This chat has no agent reply with that id."),
  submission_not_found: () => new ApiError(404, "submission_not_found", "This chat has no submission with that id."),
  question_not_found: () => new ApiError(404, "question_not_found", "This chat has no question with that id."),
  submission_started: () => new ApiError(409, "submission_started", "This submission has started (or finished); stop its reply instead."),
  bad_cursor: () => invalidRequest("The cursor is not one this chat gave out.", [{ path: "cursor", message: "unknown or malformed cursor" }]),
  archived: () => new ApiError(409, "chat_archived", "The chat is archived; restore it before sending messages or answers."),
  key_reused: () =>
    new ApiError(
      409,
      "idempotency_key_reused",
      "This idempotency-key was used for a different message or answer (or by another of send, steer and answer); use a new key for a new one.",
    ),
  create_key_reused: () => new ApiError(409, "idempotency_key_reused", "This idempotency-key created a chat with another title; use a new key for a new chat."),
  cancelled: () => new ApiError(409, "submission_cancelled", "The submission with this idempotency-key was cancelled; it will not run. Use a new key to send it again."),
  unknown_reply_target: () => invalidRequest("replyToMessageId does not name a message of this chat.", [{ path: "replyToMessageId", message: "not a message of this chat" }]),
  question_not_pending: ({ status }) => new ApiError(409, "question_not_pending", `This question is ${status}; it takes no more answers.`),
  answer_does_not_fit: ({ why }) => new ApiError(400, "answer_does_not_fit", `The answer does not fit this question: ${why}`),
  credit_limit: () =>
    new ApiError(
      403,
      "token_credit_limit",
      "This credential's tasks have spent its credit limit; raise or remove the limit (PATCH /auth/api-tokens/{tokenId}, or the account page) to send more.",
    ),
  chat_busy: () =>
    new ApiError(409, "chat_busy", "The chat is busy (a task runs or entries wait) and the send said If-Busy: reject; nothing was stored, and the key is still free."),
  queue_full: () =>
    new ApiError(
      409,
      "queue_full",
      `The chat's queue is full (at most ${QUEUE_MAX_ENTRIES} pending entries holding ${QUEUE_MAX_BYTES} bytes); wait for entries to run, or cancel some.`,
    ),
  fork_key_reused: () => new ApiError(409, "idempotency_key_reused", "This idempotency-key forked this chat with another body; use a new key for a new fork."),
  unknown_fork_point: () => invalidRequest("atMessageId does not name a message of this chat.", [{ path: "atMessageId", message: "not a message of this chat" }]),
  rerun_not_a_task_start: () =>
    invalidRequest("rerun takes a user message with which a task began (not a reply, a steering text or an answer to a question).", [
      { path: "rerun", message: "atMessageId is not a user message that began a task" },
    ]),
  message_working: () => new ApiError(409, "message_working", "A reply up to atMessageId is still working; fork once it has ended, or at a message before it."),
  fork_too_long: () =>
    new ApiError(
      409,
      "fork_too_long",
      `The history up to atMessageId is longer than a fork copies (${FORK_LIMITS.messages} messages or ${FORK_LIMITS.bytes} bytes of content); nothing was made.`,
    ),
  too_many_streams: ({ retryAfterSeconds }) =>
    new ApiError(429, "too_many_streams", `This token already has ${MAX_STREAMS_PER_TOKEN} event streams open; close one or try again in ${retryAfterSeconds} s.`, {
      headers: { "retry-after": String(retryAfterSeconds) },
    }),
  credential_gone: () => unauthorized("api", "The API token was revoked or has expired."),
};

/** The refusal as the error every channel renders: its status, code and detail from the table. */
export function refusalError<R extends Refusal>(refusal: R): ApiError {
  return (REFUSALS[refusal.kind] as (refusal: R) => ApiError)(refusal);
}
