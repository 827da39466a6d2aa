import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { ApiError } from "../../http/problem";
import { createRouter, jsonBody, jsonResponse, jsonText, problems } from "../../http/router";
import { chatInProject, found } from "./route-access";
import { Chat, ChatList, ChatParams, ChatTitleBody, CreateChatHeaders, ListChatsQuery } from "../schemas";
import { authorise, projectProblems, read, security, write } from "../../projects/guards";
import { ProjectParams } from "../../projects/schemas";

/** Chats themselves: list, create, read, rename, archive and restore. */
export const chatLifecycleRoutes = createRouter<GatedEnv>();

chatLifecycleRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats",
    operationId: "listChats",
    tags: ["Chats"],
    summary: "List the project's chats, newest updatedAt first",
    security,
    middleware: read,
    request: { params: ProjectParams, query: ListChatsQuery },
    responses: { 200: jsonResponse(ChatList, "Active chats, or archived ones with archived=true"), ...projectProblems },
  }),
  async (c) => {
    const access = await authorise(c, "read", c.req.valid("param").projectId);
    // The project's ProjectChats object hands the list over as JSON text, built once per change.
    const list = await c.env.PROJECT_CHATS.getByName(access.projectId).list(access.projectId, c.req.valid("query").archived === "true");
    return jsonText(c, list, 200);
  },
);

chatLifecycleRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats",
    operationId: "createChat",
    tags: ["Chats"],
    summary: "Create an empty chat",
    description:
      "With an `idempotency-key` (a UUID), a retry after a lost answer cannot make a second chat: the same key with the same title answers the " +
      "first answer again (201, `Idempotency-Replayed: true`), also when the requests run at once; with another title, 409 `idempotency_key_reused`. " +
      "Keys are remembered 24 hours per project.",
    security,
    middleware: write,
    request: { params: ProjectParams, headers: CreateChatHeaders, body: jsonBody(ChatTitleBody) },
    responses: { 201: jsonResponse(Chat, "The new chat (or the first answer to this idempotency-key)", "Idempotency-Replayed"), ...problems(400, 401, 403, 404, 409, 429) },
  }),
  async (c) => {
    const access = await authorise(c, "write", c.req.valid("param").projectId);
    const { title } = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"];
    if (!key) {
      const chatId = crypto.randomUUID();
      return c.json(await c.env.CHAT_ROOM.getByName(chatId).create(chatId, access.projectId, title), 201);
    }
    const chats = c.env.PROJECT_CHATS.getByName(access.projectId);
    const claim = await chats.claimCreateKey(key, title);
    if (claim.kind === "conflict") {
      throw new ApiError(409, "idempotency_key_reused", "This idempotency-key created a chat with another title; use a new key for a new chat.");
    }
    if (claim.kind === "replay" && claim.answer) return jsonText<Chat, 201>(c, claim.answer, 201, { "idempotency-replayed": "true" });
    // Creating is idempotent in the chat's object, so a replay whose first request has not answered yet creates nothing twice.
    const chat = await c.env.CHAT_ROOM.getByName(claim.chatId).create(claim.chatId, access.projectId, title);
    if (claim.kind === "new") {
      await chats.recordCreateAnswer(key, JSON.stringify(chat));
      return c.json(chat, 201);
    }
    return c.json(chat, 201, { "idempotency-replayed": "true" });
  },
);

chatLifecycleRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}",
    operationId: "getChat",
    tags: ["Chats"],
    summary: "Read a chat",
    security,
    middleware: read,
    request: { params: ChatParams },
    responses: { 200: jsonResponse(Chat, "The chat", "Chat-Event-Id"), ...projectProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const { chat: view, eventId } = found(await chat.get(access.projectId));
    return c.json(view, 200, { "chat-event-id": String(eventId) });
  },
);

chatLifecycleRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/{projectId}/chats/{chatId}",
    operationId: "renameChat",
    tags: ["Chats"],
    summary: "Rename a chat",
    security,
    middleware: write,
    request: { params: ChatParams, body: jsonBody(ChatTitleBody) },
    responses: { 200: jsonResponse(Chat, "The renamed chat"), ...projectProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "write", c.req.valid("param"));
    return c.json(found(await chat.rename(access.projectId, c.req.valid("json").title)).chat, 200);
  },
);

for (const [action, archived] of [
  ["archive", true],
  ["restore", false],
] as const) {
  chatLifecycleRoutes.openapi(
    createRoute({
      method: "post",
      path: `/{projectId}/chats/{chatId}/${action}`,
      operationId: `${action}Chat`,
      tags: ["Chats"],
      security,
      middleware: write,
      summary: archived ? "Archive a chat (it then refuses messages)" : "Restore an archived chat",
      request: { params: ChatParams },
      responses: { 200: jsonResponse(Chat, "The chat"), ...projectProblems },
    }),
    async (c) => {
      const { access, chat } = await chatInProject(c, "write", c.req.valid("param"));
      return c.json(found(await chat.setArchived(access.projectId, archived)).chat, 200);
    },
  );
}
