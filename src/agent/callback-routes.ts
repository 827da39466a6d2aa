import { createRoute, z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { secretsEqual } from "../auth/crypto";
import { bearerToken } from "../auth/secrets";
import { config } from "../config";
import type { AppEnv } from "../env";
import { ApiError, invalidRequest, notFound } from "../http/problem";
import { createRouter, jsonBody, problems } from "../http/router";
import { AgentResultBody, PartialOutputBody } from "./http";

export const agentCallbackRoutes = createRouter();
const TaskParams = z.object({ chatId: z.uuid(), taskId: z.uuid() });

/** Only in http mode, and only with the shared AGENT_SECRET (compared in constant time). */
const requireAgentSecret = createMiddleware<AppEnv>(async (c, next) => {
  const { agent } = config(c.env);
  const secret = agent.mode === "http" ? agent.secret : undefined;
  if (!secret) throw notFound();
  const given = bearerToken(c.req.header("authorization"));
  if (!given || !(await secretsEqual(given, secret))) throw new ApiError(401, "unauthorized", "The agent secret is wrong.", { headers: { "www-authenticate": 'Bearer realm="agent"' } });
  await next();
});

const roomOf = (env: AppEnv["Bindings"], chatId: string) => env.CHAT_ROOM.getByName(chatId.toLowerCase());

agentCallbackRoutes.openapi(
  createRoute({
    method: "post", path: "/agent/chats/{chatId}/tasks/{taskId}/result", operationId: "deliverAgentResult", tags: ["Agent"], hide: true, middleware: [requireAgentSecret],
    summary: "An external agent delivers a task's result (docs/agent-protocol.md)",
    request: { params: TaskParams, body: jsonBody(AgentResultBody) },
    responses: { 204: { description: "Stored (or stored already)" }, ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    const outcome = await roomOf(c.env, chatId).completeTask(taskId.toLowerCase(), c.req.valid("json"));
    if (outcome === "unknown") throw notFound("No such task in this chat.");
    return c.body(null, 204);
  },
);

agentCallbackRoutes.openapi(
  createRoute({
    method: "post", path: "/agent/chats/{chatId}/tasks/{taskId}/partial", operationId: "appendAgentPartial", tags: ["Agent"], hide: true, middleware: [requireAgentSecret],
    summary: "An external agent appends text to a running task's reply (docs/agent-protocol.md)",
    request: { params: TaskParams, body: jsonBody(PartialOutputBody) },
    responses: { 204: { description: "Appended, or ignored as a repeat or as late" }, ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    const { seq, text } = c.req.valid("json");
    const outcome = await roomOf(c.env, chatId).appendPartial(taskId.toLowerCase(), seq, text);
    switch (outcome) {
      case "unknown": throw notFound("No such task in this chat.");
      case "out_of_order": throw new ApiError(409, "conflict", "Partial outputs are numbered 1, 2, 3, … and sent in order; an earlier part has not arrived.");
      case "too_long": throw invalidRequest("The reply would exceed 100000 characters.", [{ path: "text", message: "too long for the reply" }]);
    }
    return c.body(null, 204);
  },
);
