import { createRoute, z } from "@hono/zod-openapi";
import { secretsEqual } from "../auth/crypto";
import { bearerToken } from "../auth/secrets";
import { ApiError, notFound } from "../http/problem";
import { createRouter, jsonBody, problems } from "../http/router";
import { AgentResultBody } from "./http";

export const agentCallbackRoutes = createRouter();
const UUID = z.uuid();

agentCallbackRoutes.openapi(
  createRoute({
    method: "post", path: "/agent/chats/{chatId}/tasks/{taskId}/result", operationId: "deliverAgentResult", tags: ["Agent"], hide: true,
    summary: "An external agent delivers a task's result (docs/agent-protocol.md)",
    request: {
      params: z.object({ chatId: UUID, taskId: UUID }),
      body: jsonBody(AgentResultBody),
    },
    responses: { 204: { description: "Stored (or stored already)" }, ...problems(400, 401, 404) },
  }),
  async (c) => {
    const secret = c.env.AGENT_SECRET;
    const given = bearerToken(c.req.header("authorization"));
    if (c.env.AGENT_MODE !== "http" || !secret) throw notFound();
    if (!given || !(await secretsEqual(given, secret))) throw new ApiError(401, "unauthorized", "The agent secret is wrong.", { headers: { "www-authenticate": 'Bearer realm="agent"' } });
    const { chatId, taskId } = c.req.valid("param");
    const outcome = await c.env.CHAT_ROOM.getByName(chatId.toLowerCase()).completeTask(taskId.toLowerCase(), c.req.valid("json"));
    if (outcome === "unknown") throw notFound("No such task in this chat.");
    return c.body(null, 204);
  },
);
