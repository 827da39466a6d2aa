import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireScope, tokenGate, type GatedEnv } from "../auth/gate";
import { jsonBodyGuard } from "../http/json-body";
import { limitBody } from "../http/middleware";
import { MAX_STREAMS_PER_TOKEN } from "../auth/token-gate";
import { ApiError, invalidRequest, notFound } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { projectAccess } from "../projects/access";
import { listChats } from "./index-store";
import { cachedMaintenance } from "./maintenance";
import {
  CONTENT_MAX,
  Chat,
  ChatEvent,
  ChatList,
  ChatParams,
  ChatTitleBody,
  EventsHeaders,
  EventsQuery,
  ListChatsQuery,
  MESSAGE_BODY_LIMIT_BYTES,
  MessagePage,
  MessagesQuery,
  ProjectParams,
  Queue,
  SendMessageBody,
  SendMessageHeaders,
  Submission,
} from "./schemas";

/** The project-chat API, mounted at /v1/projects: personal API tokens only, counted per token. */
export const chatRoutes = createRouter<GatedEnv>();
// Never below the largest valid message body, however the client escapes its characters.
chatRoutes.use("*", limitBody(MESSAGE_BODY_LIMIT_BYTES), tokenGate, jsonBodyGuard);

const security = [{ userApiTokenBearer: [] }];
const read = [requireScope("chat:read")];
const write = [requireScope("chat:write")];
const chatProblems = problems(400, 401, 403, 404, 429);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller's access to the project: 404 when unknown, not a member or suspended (or a malformed id); 403 for a viewer writing. */
async function authorise(c: Context<GatedEnv>, need: "read" | "write", projectId: string) {
  const access = UUID.test(projectId) ? await projectAccess(c.env.DB, projectId.toLowerCase(), c.get("caller").accountId) : null;
  if (!access) throw notFound("The project does not exist or is not available to you.");
  if (need === "write" && access.role === "viewer") throw new ApiError(403, "forbidden", "Viewers of this project can read chats but not change them.");
  return access;
}

/** Project access, then the chat's object; whether the chat is in that project is the object's answer. */
async function chatInProject(c: Context<GatedEnv>, need: "read" | "write", params: { projectId: string; chatId: string }) {
  if (!UUID.test(params.chatId)) throw notFound();
  const access = await authorise(c, need, params.projectId);
  return { access, chat: c.env.CHAT_ROOM.getByName(params.chatId.toLowerCase()) };
}

const chatNotFound = () => notFound("The chat does not exist in this project or is not available to you.");
const found = <T>(value: T | null): T => {
  if (value === null) throw chatNotFound();
  return value;
};

chatRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats",
    operationId: "listChats",
    tags: ["Chats"],
    summary: "List the project's chats, newest updatedAt first",
    security,
    middleware: read,
    request: { params: ProjectParams, query: ListChatsQuery },
    responses: { 200: jsonResponse(ChatList, "Active chats, or archived ones with archived=true"), ...chatProblems },
  }),
  async (c) => {
    const access = await authorise(c, "read", c.req.valid("param").projectId);
    return c.json({ items: await listChats(c.env.DB, access.projectId, c.req.valid("query").archived === "true") }, 200);
  },
);

chatRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats",
    operationId: "createChat",
    tags: ["Chats"],
    summary: "Create an empty chat",
    security,
    middleware: write,
    request: { params: ProjectParams, body: jsonBody(ChatTitleBody) },
    responses: { 201: jsonResponse(Chat, "The new chat"), ...chatProblems },
  }),
  async (c) => {
    const access = await authorise(c, "write", c.req.valid("param").projectId);
    const chatId = crypto.randomUUID();
    const chat = await c.env.CHAT_ROOM.getByName(chatId).create(chatId, access.projectId, c.req.valid("json").title);
    return c.json(chat, 201);
  },
);

chatRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}",
    operationId: "getChat",
    tags: ["Chats"],
    summary: "Read a chat",
    security,
    middleware: read,
    request: { params: ChatParams },
    responses: { 200: jsonResponse(Chat, "The chat"), ...chatProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    return c.json(found(await chat.get(access.projectId)), 200);
  },
);

chatRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/{projectId}/chats/{chatId}",
    operationId: "renameChat",
    tags: ["Chats"],
    summary: "Rename a chat",
    security,
    middleware: write,
    request: { params: ChatParams, body: jsonBody(ChatTitleBody) },
    responses: { 200: jsonResponse(Chat, "The renamed chat"), ...chatProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "write", c.req.valid("param"));
    return c.json(found(await chat.rename(access.projectId, c.req.valid("json").title)), 200);
  },
);

for (const [action, archived] of [
  ["archive", true],
  ["restore", false],
] as const) {
  chatRoutes.openapi(
    createRoute({
      method: "post",
      path: `/{projectId}/chats/{chatId}/${action}`,
      operationId: `${action}Chat`,
      tags: ["Chats"],
      security,
      middleware: write,
      summary: archived ? "Archive a chat (it then refuses messages)" : "Restore an archived chat",
      request: { params: ChatParams },
      responses: { 200: jsonResponse(Chat, "The chat"), ...chatProblems },
    }),
    async (c) => {
      const { access, chat } = await chatInProject(c, "write", c.req.valid("param"));
      return c.json(found(await chat.setArchived(access.projectId, archived)), 200);
    },
  );
}

chatRoutes.openapi(
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

chatRoutes.openapi(
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
    const [{ access, chat }, maintenance] = await Promise.all([chatInProject(c, "write", params), cachedMaintenance(c.env.DB)]);
    const { content, replyToMessageId } = c.req.valid("json");
    const outcome = await chat.submit(access.projectId, {
      idempotencyKey: c.req.valid("header")["idempotency-key"].toLowerCase(),
      content,
      replyToMessageId: replyToMessageId?.toLowerCase() ?? null,
      maintenance,
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

chatRoutes.openapi(
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

chatRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/events",
    tags: ["Events"],
    operationId: "followChatEvents",
    security,
    middleware: read,
    summary: "Follow a chat live: a resumable Server-Sent Events stream",
    description:
      "Starts with a `snapshot` (or, with Last-Event-ID / `after`, replays every event after that id), then sends `chat`, `queue`, `message` and " +
      "`message.delta` events as they happen. Ids increase strictly per chat; events are kept at least 24 hours. A `: keep-alive` comment comes at " +
      "least every 15 s. The server ends a stream after 5 minutes, or within 60 s of the token's revocation or expiry or the loss of project access; " +
      "reconnect with Last-Event-ID. Opening a stream counts as one request; at most 10 streams per token may be open at once (429 beyond).",
    request: { params: ChatParams, query: EventsQuery, headers: EventsHeaders },
    responses: {
      200: { description: "The event stream", content: { "text/event-stream": { schema: ChatEvent } } },
      ...chatProblems,
    },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const resume = c.req.valid("header")["last-event-id"] ?? c.req.valid("query").after;
    const { accountId, tokenHash } = c.get("caller");
    const gate = c.env.TOKEN_GATE.getByName(tokenHash);
    const leaseId = crypto.randomUUID();
    const lease = await gate.openStream(leaseId);
    if (lease.kind === "limited") {
      throw new ApiError(429, "rate_limited", `This token already has ${MAX_STREAMS_PER_TOKEN} event streams open; close one or try again in ${lease.retryAfterSeconds} s.`, {
        headers: { "retry-after": String(lease.retryAfterSeconds) },
      });
    }
    const stream = await chat.follow(access.projectId, resume === undefined ? null : Number(resume), { tokenHash, leaseId, accountId, projectId: access.projectId });
    if (!stream) {
      c.executionCtx.waitUntil(gate.closeStream(leaseId));
      throw chatNotFound();
    }
    return c.body(stream, 200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
  },
);
