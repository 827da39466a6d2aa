import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { createRouter, jsonBody, jsonResponse, jsonText, problems } from "../../http/router";
import { Chat, ChatList, ChatParams, ChatTitleBody, CreateChatHeaders, ListChatsQuery } from "../schemas";
import { projectProblems, read, security, write } from "../../projects/guards";
import { chatService, served } from "../service/chat-service";
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
    // The project's ProjectChats object hands the list over as JSON text, built once per change.
    return jsonText(c, served(await chatService(c).chats(c.req.valid("param").projectId, c.req.valid("query").archived === "true")).body, 200);
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
    const { title } = c.req.valid("json");
    const { body, replayed } = served(await chatService(c).createChat(c.req.valid("param").projectId, title, c.req.valid("header")["idempotency-key"]));
    const headers: Record<string, string> = replayed ? { "idempotency-replayed": "true" } : {};
    // A replay's stored answer is JSON text already.
    return typeof body === "string" ? jsonText<Chat, 201>(c, body, 201, headers) : c.json(body, 201, headers);
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
    const { body, eventId } = served(await chatService(c).getChat(c.req.valid("param")));
    return c.json(body, 200, { "chat-event-id": String(eventId) });
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
    return c.json(served(await chatService(c).rename(c.req.valid("param"), c.req.valid("json").title)).body, 200);
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
      return c.json(served(await chatService(c).setArchived(c.req.valid("param"), archived)).body, 200);
    },
  );
}
