import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { createRouter, jsonBody, jsonResponse, jsonText } from "../http/router";
import { authorise, chatInProject, chatProblems, found, read, security, write } from "./route-access";
import { Chat, ChatList, ChatParams, ChatTitleBody, ListChatsQuery, ProjectParams } from "./schemas";

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
    responses: { 200: jsonResponse(ChatList, "Active chats, or archived ones with archived=true"), ...chatProblems },
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
    responses: { 200: jsonResponse(Chat, "The chat"), ...chatProblems },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    return c.json(found(await chat.get(access.projectId)), 200);
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
      responses: { 200: jsonResponse(Chat, "The chat"), ...chatProblems },
    }),
    async (c) => {
      const { access, chat } = await chatInProject(c, "write", c.req.valid("param"));
      return c.json(found(await chat.setArchived(access.projectId, archived)), 200);
    },
  );
}
