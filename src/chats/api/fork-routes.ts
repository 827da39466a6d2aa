import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { createRouter, jsonBody, jsonResponse, problems } from "../../http/router";
import { security, write } from "../../projects/guards";
import { FORK_LIMITS } from "../limits";
import { ChatParams, ForkBody, ForkHeaders, Forked } from "../schemas";
import { chatService, served } from "../service/chat-service";

/** Forking a chat: another direction, an edited question or another answer, the first line kept. */
export const forkRoutes = createRouter<GatedEnv>();

forkRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/fork",
    operationId: "forkChat",
    tags: ["Chats"],
    summary: "Fork a chat at a message: a new chat that starts as a copy of its history up to there",
    description:
      "The fork holds every message of this chat up to and including `atMessageId` (new ids; role, content, status and createdAt kept; taskId, " +
      "submissionId, usage and questionId null), its event log starting with one `message` event per copy; no queue, submissions, keys, questions, " +
      "usage or credits are carried, and the source is untouched. With `rerun` and a user message with which a task began, the fork holds what came " +
      "before it and that message's text is sent to the fork as a new submission (`submissionId`): another answer to the same question. To edit " +
      "what was asked, fork at the message before it and send the new text. An archived chat may be forked. The `idempotency-key` is this chat's " +
      "(apart from its send keys): the same key and body answer the same fork again (201, `Idempotency-Replayed: true`), also at once; another body " +
      `409 idempotency_key_reused. At most ${FORK_LIMITS.messages} messages or ${FORK_LIMITS.bytes} bytes of content are copied (else 409 fork_too_long, ` +
      "nothing made). Checks run in this order: 400 (body, key), 404, the key, atMessageId and rerun (400), message_working (409: a reply up to " +
      "atMessageId still works), fork_too_long, then a rerun's token_credit_limit (403).",
    security,
    middleware: write,
    request: { params: ChatParams, headers: ForkHeaders, body: jsonBody(ForkBody) },
    responses: {
      201: jsonResponse(Forked, "The fork as it now is (or the first answer to this idempotency-key)", "Location", "Idempotency-Replayed"),
      ...problems(400, 401, 403, 404, 409, 429),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const { body, replayed } = served(await chatService(c).fork(params, c.req.valid("header")["idempotency-key"], c.req.valid("json")));
    // The new chat's URL: this one's, with the fork's id for the source's.
    const headers: Record<string, string> = { location: c.req.path.replace(/\/[^/]+\/fork$/, `/${body.chat.id}`) };
    if (replayed) headers["idempotency-replayed"] = "true";
    return c.json(body, 201, headers);
  },
);
