import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { secretsEqual } from "../crypto";
import { bearerToken } from "../auth/secrets";
import { config } from "../config";
import type { AppEnv } from "../env";
import { jsonBodyGuard } from "../http/json-body";
import { MiB, limitBody } from "../http/middleware";
import { ApiError, invalidRequest, notFound, unauthorized, validationHook } from "../http/problem";
import { AgentResultBody, PartialOutputBody, SteeringAckBody } from "./http";
import { REPLY_MAX } from "./limits";

/** Only in http mode, and only with the shared AGENT_SECRET (compared in constant time). */
const requireAgentSecret = createMiddleware<AppEnv>(async (c, next) => {
  const { agent } = config(c.env);
  const secret = agent.mode === "http" ? agent.secret : undefined;
  if (!secret) throw notFound();
  const given = bearerToken(c.req.header("authorization"));
  if (!given || !(await secretsEqual(given, secret))) throw unauthorized("agent", "The agent secret is wrong.");
  await next();
});

// Not in the public OpenAPI description (only the external agent calls these), so the zod validator is used directly.
const valid = <T extends z.ZodType>(target: "json" | "param", schema: T) => zValidator(target, schema, (result, c) => validationHook({ ...result, target }, c));
const lowercaseId = () => z.uuid().overwrite((id) => id.toLowerCase());
const TaskParams = z.object({ chatId: lowercaseId(), taskId: lowercaseId() });
const roomOf = (env: AppEnv["Bindings"], chatId: string) => env.CHAT_ROOM.getByName(chatId);

/** The answers every call about a task that is not running shares: unknown is 404, stopped is refused (its output is discarded). */
function refuseEndedTask(outcome: string): void {
  if (outcome === "unknown") throw notFound("No such task in this chat.");
  if (outcome === "stopped") throw new ApiError(409, "conflict", "The user stopped this task; its output is discarded. Stop working on it.");
}

/** The http agent's side of docs/agent-protocol.md, mounted at /agent. */
export const agentCallbackRoutes = new Hono<AppEnv>()
  .use("*", limitBody(MiB), requireAgentSecret, jsonBodyGuard)
  .post("/chats/:chatId/tasks/:taskId/result", valid("param", TaskParams), valid("json", AgentResultBody), async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    refuseEndedTask(await roomOf(c.env, chatId).completeTask(taskId, c.req.valid("json")));
    return c.body(null, 204);
  })
  .post("/chats/:chatId/tasks/:taskId/partial", valid("param", TaskParams), valid("json", PartialOutputBody), async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    const { seq, text } = c.req.valid("json");
    const outcome = await roomOf(c.env, chatId).appendPartial(taskId, seq, text);
    refuseEndedTask(outcome);
    switch (outcome) {
      case "out_of_order":
        throw new ApiError(409, "conflict", "Partial outputs are numbered 1, 2, 3, … and sent in order; an earlier part has not arrived.");
      case "too_long":
        throw invalidRequest(`The reply would exceed ${REPLY_MAX} characters.`, [{ path: "text", message: "too long for the reply" }]);
    }
    return c.body(null, 204);
  })
  .get("/chats/:chatId/tasks/:taskId/steering", valid("param", TaskParams), async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    const offer = await roomOf(c.env, chatId).steeringFor(taskId);
    refuseEndedTask(offer.kind);
    if (offer.kind !== "offer") throw new ApiError(409, "conflict", "The task has ended; there is nothing to take.");
    return c.json({ items: offer.items }, 200);
  })
  .post("/chats/:chatId/tasks/:taskId/steering/ack", valid("param", TaskParams), valid("json", SteeringAckBody), async (c) => {
    const { chatId, taskId } = c.req.valid("param");
    const ids = c.req.valid("json").ids.map((id) => id.toLowerCase());
    const ack = await roomOf(c.env, chatId).acceptSteering(taskId, ids);
    refuseEndedTask(ack.kind);
    if (ack.kind === "already_finished") throw new ApiError(409, "conflict", "The task has ended; steering texts it did not take run as tasks of their own.");
    if (ack.kind === "refused") {
      throw new ApiError(409, "conflict", `${ack.id} is not the next steering text waiting for this task (cancelled, or out of order); GET the steering list again.`);
    }
    return c.body(null, 204);
  });
