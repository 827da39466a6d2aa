import { createRoute, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { GatedEnv } from "../../auth/gate";
import { ApiError, invalidRequest } from "../../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../../http/router";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import { maintenanceFlag } from "../maintenance";
import { chatInProject, found, messageNotFound, questionNotFound, submissionNotFound } from "./route-access";
import {
  ChatParams,
  MESSAGE_BODY_LIMIT_BYTES,
  Message,
  MessagePage,
  MessageParams,
  MessagesQuery,
  Queue,
  SendMessageBody,
  type SendMessageHeaders,
  SendWithIfBusyHeaders,
  type IfBusy,
  Submission,
  SubmissionParams,
  SubmissionState,
} from "../schemas";
import { projectProblems, read, security, write } from "../../projects/guards";
import { CONTENT_MAX } from "../../agent/limits";
import type { Submitted } from "../room-calls";
import { timed } from "../../http/server-timing";

/** Messages: the history, sending one (idempotently), the queue, and what a submission became. */
export const messageRoutes = createRouter<GatedEnv>();

export const SUBMIT_DESCRIPTION =
  `Retry with the same idempotency-key and identical body after a connection failure: the first answer is returned again with Idempotency-Replayed: true. ` +
  `Keys are shared by sending, steering and answering a question: a key used by one cannot be used by another. A send or steer accepted while a question ` +
  `is pending answers it with its text when it takes text (text, or a choice with allowText), else supersedes it. A chat holds at most ${QUEUE_MAX_ENTRIES} pending entries ` +
  `(queued, steering, dispatching) holding at most ${QUEUE_MAX_BYTES} bytes of content: beyond, 409 queue_full and nothing is stored. Checks run in this order: ` +
  `400, 404, the idempotency key (a replay is 202, whatever If-Busy it carries; then submission_cancelled, idempotency_key_reused), token_credit_limit (403: the ` +
  `credential's tasks have spent its credit limit), chat_archived, for an answer question_not_pending and answer_does_not_fit, chat_busy (a send with ` +
  `If-Busy: reject), queue_full. The body may be up to ` +
  `${MESSAGE_BODY_LIMIT_BYTES} bytes, enough for ${CONTENT_MAX} characters each sent as a \\uXXXX\\uXXXX escape pair.`;

type SubmitInput = {
  out: { param: z.infer<typeof ChatParams>; header: z.infer<typeof SendMessageHeaders> & { "if-busy"?: IfBusy }; json: z.infer<typeof SendMessageBody> };
};

/** Sending (as If-Busy says when the chat is busy) and steering a text. */
export async function submitTo<P extends string>(c: Context<GatedEnv, P, SubmitInput>, kind: "send" | "steer") {
  const { content, replyToMessageId } = c.req.valid("json");
  const header = c.req.valid("header");
  const text = { idempotencyKey: header["idempotency-key"], content, replyToMessageId: replyToMessageId?.toLowerCase() ?? null };
  const submitted: Submitted = kind === "send" ? { kind, ...text, ifBusy: header["if-busy"] ?? "queue" } : { kind, ...text };
  return c.json(await submitToChat(c, c.req.valid("param"), submitted), 202);
}

/**
 * Sending, steering and answering a question: the chat's object decides; every outcome but acceptance is a
 * problem. The accepted submission, its replay marked by the Idempotency-Replayed header.
 */
export async function submitToChat(c: Context<GatedEnv>, params: { projectId: string; chatId: string }, submitted: Submitted) {
  const [{ access, chat }, maintenance] = await Promise.all([chatInProject(c, "write", params), maintenanceFlag(c.env.DB)]);
  const { gateName, atCreditLimit } = c.get("caller");
  const request = { ...submitted, seen: { maintenance, project: access.project }, credential: { gateName, atCreditLimit } };
  const outcome = found(await timed(c, "chat", () => chat.submit(access.projectId, request)));
  switch (outcome.kind) {
    case "question_not_found":
      throw questionNotFound();
    case "archived":
      throw new ApiError(409, "chat_archived", "The chat is archived; restore it before sending messages or answers.");
    case "key_reused":
      throw new ApiError(
        409,
        "idempotency_key_reused",
        "This idempotency-key was used for a different message or answer (or by another of send, steer and answer); use a new key for a new one.",
      );
    case "cancelled":
      throw new ApiError(409, "submission_cancelled", "The submission with this idempotency-key was cancelled; it will not run. Use a new key to send it again.");
    case "unknown_reply_target":
      throw invalidRequest("replyToMessageId does not name a message of this chat.", [{ path: "replyToMessageId", message: "not a message of this chat" }]);
    case "question_not_pending":
      throw new ApiError(409, "question_not_pending", `This question is ${outcome.status}; it takes no more answers.`);
    case "answer_does_not_fit":
      throw new ApiError(400, "answer_does_not_fit", `The answer does not fit this question: ${outcome.why}`);
    case "credit_limit":
      throw new ApiError(
        403,
        "token_credit_limit",
        "This credential's tasks have spent its credit limit; raise or remove the limit (PATCH /auth/api-tokens/{tokenId}, or the account page) to send more.",
      );
    case "chat_busy":
      throw new ApiError(409, "chat_busy", "The chat is busy (a task runs or entries wait) and the send said If-Busy: reject; nothing was stored, and the key is still free.");
    case "queue_full":
      throw new ApiError(
        409,
        "queue_full",
        `The chat's queue is full (at most ${QUEUE_MAX_ENTRIES} pending entries holding ${QUEUE_MAX_BYTES} bytes); wait for entries to run, or cancel some.`,
      );
  }
  if (outcome.replayed) c.header("idempotency-replayed", "true");
  return outcome.submission;
}

messageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/messages",
    operationId: "listMessages",
    tags: ["Messages"],
    summary: "Message history, newest first",
    security,
    middleware: read,
    request: { params: ChatParams, query: MessagesQuery },
    responses: { 200: jsonResponse(MessagePage, "A page of messages; pass nextCursor as cursor for older ones", "Chat-Event-Id"), ...projectProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const { cursor, limit } = c.req.valid("query");
    const page = found(await chat.messages(access.projectId, cursor, limit));
    if (page.kind === "bad_cursor") throw invalidRequest("The cursor is not one this chat gave out.", [{ path: "cursor", message: "unknown or malformed cursor" }]);
    return c.json({ items: page.items, nextCursor: page.nextCursor }, 200, { "chat-event-id": String(page.eventId) });
  },
);

messageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/messages/{messageId}",
    operationId: "getMessage",
    tags: ["Messages"],
    summary: "One message, as it stands now",
    description:
      "Any message of the chat by its id: a user message, an agent reply (working or ended) or an error. A submission's `replyMessageId` read " +
      "this way follows its reply without paging the history; its Chat-Event-Id lets a stream opened with `after` add only the deltas the read " +
      "does not show yet. An id the chat does not have, well-formed or not, answers 404 `message_not_found`.",
    security,
    middleware: read,
    request: { params: MessageParams },
    responses: { 200: jsonResponse(Message, "The message", "Chat-Event-Id"), ...problems(401, 403, 404, 429) },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const outcome = found(await chat.message(access.projectId, c.req.valid("param").messageId));
    if (outcome.kind === "message_not_found") throw messageNotFound();
    return c.json(outcome.message, 200, { "chat-event-id": String(outcome.eventId) });
  },
);

messageRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/messages",
    operationId: "sendMessage",
    tags: ["Messages"],
    security,
    middleware: write,
    summary: "Send a message to the chat agent; 202 confirms acceptance, not completion",
    description: SUBMIT_DESCRIPTION,
    request: { params: ChatParams, headers: SendWithIfBusyHeaders, body: jsonBody(SendMessageBody) },
    responses: {
      202: jsonResponse(Submission, "Accepted (or the stored first answer to this idempotency-key)", "Idempotency-Replayed"),
      ...problems(400, 401, 403, 404, 409, 429),
    },
  }),
  (c) => submitTo(c, "send"),
);

messageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/queue",
    operationId: "getQueue",
    tags: ["Messages"],
    summary: "Pending, dispatching and failed submissions, in order",
    security,
    middleware: read,
    request: { params: ChatParams },
    responses: { 200: jsonResponse(Queue, "The queue", "Chat-Event-Id"), ...projectProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const { items, eventId } = found(await chat.queueEntries(access.projectId));
    return c.json({ items }, 200, { "chat-event-id": String(eventId) });
  },
);

messageRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/submissions/{submissionId}",
    operationId: "getSubmission",
    tags: ["Messages"],
    summary: "What a submission became: its status, task and messages",
    security,
    middleware: read,
    request: { params: SubmissionParams },
    responses: { 200: jsonResponse(SubmissionState, "The submission's state; ids are null until they exist"), ...projectProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const outcome = found(await chat.submissionState(access.projectId, c.req.valid("param").submissionId));
    if (outcome.kind === "submission_not_found") throw submissionNotFound();
    return c.json(outcome.submission, 200);
  },
);
