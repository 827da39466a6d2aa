import { createRoute, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { GatedEnv } from "../../auth/gate";
import { createRouter, jsonBody, jsonResponse, problems } from "../../http/router";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import { chatService, served } from "../service/chat-service";
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
  const { body, replayed } = served(await chatService(c).submit(params, submitted));
  if (replayed) c.header("idempotency-replayed", "true");
  return body;
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
    const { cursor, limit } = c.req.valid("query");
    const { body, eventId } = served(await chatService(c).messages(c.req.valid("param"), cursor, limit));
    return c.json(body, 200, { "chat-event-id": String(eventId) });
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
    const params = c.req.valid("param");
    const { body, eventId } = served(await chatService(c).message(params, params.messageId));
    return c.json(body, 200, { "chat-event-id": String(eventId) });
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
    const { body, eventId } = served(await chatService(c).queue(c.req.valid("param")));
    return c.json(body, 200, { "chat-event-id": String(eventId) });
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
    const params = c.req.valid("param");
    return c.json(served(await chatService(c).submission(params, params.submissionId)).body, 200);
  },
);
