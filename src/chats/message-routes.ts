import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { ApiError, invalidRequest } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { maintenanceFlag } from "./maintenance";
import { chatInProject, chatNotFound, chatProblems, found, read, security, write } from "./route-access";
import { CONTENT_MAX, ChatParams, MESSAGE_BODY_LIMIT_BYTES, MessagePage, MessagesQuery, Queue, SendMessageBody, SendMessageHeaders, Submission } from "./schemas";

/** Messages: the history, sending one (idempotently), and the queue. */
export const messageRoutes = createRouter<GatedEnv>();

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
    responses: { 200: jsonResponse(MessagePage, "A page of messages; pass nextCursor as cursor for older ones"), ...chatProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const { cursor, limit } = c.req.valid("query");
    const page = await chat.messages(access.projectId, cursor, limit);
    if (page.kind === "not_found") throw chatNotFound();
    if (page.kind === "bad_cursor") throw invalidRequest("The cursor is not one this chat gave out.", [{ path: "cursor", message: "unknown or malformed cursor" }]);
    return c.json({ items: page.items, nextCursor: page.nextCursor }, 200);
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
    description: `Retry with the same idempotency-key and identical body after a connection failure: the first answer is returned again with Idempotency-Replayed: true. The body may be up to ${MESSAGE_BODY_LIMIT_BYTES} bytes, enough for ${CONTENT_MAX} characters each sent as a \\uXXXX\\uXXXX escape pair.`,
    request: { params: ChatParams, headers: SendMessageHeaders, body: jsonBody(SendMessageBody) },
    responses: {
      202: jsonResponse(Submission, "Accepted (or the stored first answer to this idempotency-key)", "Idempotency-Replayed"),
      ...problems(400, 401, 403, 404, 409, 429),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const [{ access, chat }, maintenance] = await Promise.all([chatInProject(c, "write", params), maintenanceFlag(c.env.DB)]);
    const { content, replyToMessageId } = c.req.valid("json");
    const outcome = await chat.submit(access.projectId, {
      idempotencyKey: c.req.valid("header")["idempotency-key"].toLowerCase(),
      content,
      replyToMessageId: replyToMessageId?.toLowerCase() ?? null,
      seen: { maintenance, project: access.project },
    });
    switch (outcome.kind) {
      case "not_found":
        throw chatNotFound();
      case "archived":
        throw new ApiError(409, "chat_archived", "The chat is archived; restore it before sending messages.");
      case "key_reused":
        throw new ApiError(409, "idempotency_key_reused", "This idempotency-key was used for a different message; use a new key for a new message.");
      case "unknown_reply_target":
        throw invalidRequest("replyToMessageId does not name a message of this chat.", [{ path: "replyToMessageId", message: "not a message of this chat" }]);
    }
    if (outcome.replayed) c.header("idempotency-replayed", "true");
    return c.json(outcome.submission, 202);
  },
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
    responses: { 200: jsonResponse(Queue, "The queue"), ...chatProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    return c.json({ items: found(await chat.queueEntries(access.projectId)) }, 200);
  },
);
