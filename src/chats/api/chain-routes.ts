import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { createRouter, jsonResponse, jsonText, problems } from "../../http/router";
import { read, security, write } from "../../projects/guards";
import { Chain } from "../chain-schemas";
import { SubmissionParams } from "../schemas";
import { chatService, served } from "../service/chat-service";

/**
 * The chain of a submission: it and the answers that followed the questions its replies asked. MCP's tasks and
 * waits and A2A's tasks report chains; these are their REST twins, one call to the chat's object each.
 */
export const chainRoutes = createRouter<GatedEnv>();

chainRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/submissions/{submissionId}/chain",
    operationId: "getChain",
    tags: ["Questions"],
    summary: "A submission's chain: where the work it started stands, across the questions its replies asked",
    description:
      "A submission whose reply asks a question is followed by the answer's submission, whose reply may ask again: one chain. " +
      "`state` says where the chain's last submission stands (`awaiting`: a question waits for an answer), `links` lists the chain from this submission on.",
    security,
    middleware: read,
    request: { params: SubmissionParams },
    responses: { 200: jsonResponse(Chain, "The chain from this submission to its end"), ...problems(401, 403, 404, 429) },
  }),
  async (c) => {
    const params = c.req.valid("param");
    return jsonText<Chain, 200>(c, served(await chatService(c).chain(params, params.submissionId)).body, 200);
  },
);

chainRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/submissions/{submissionId}/chain/cancel",
    operationId: "cancelChain",
    tags: ["Questions"],
    summary: "Cancel a chain, whatever its last submission is doing",
    description:
      "By the chain's state: `queued`, its last submission is cancelled (as DELETE …/queue/{id}); `working`, its reply is stopped (as POST …/stop; a reply " +
      "that ends before the stop lands stays as it ended); `awaiting`, the question is withdrawn: it closes `declined` with `submissionId` null and the " +
      'answer `{ decline: true, reason: "Cancelled by the client" }`, no task starts, nothing is charged and the agent is not told. A chain that has ' +
      "ended is left as it is, so a retry is safe. Allowed on an archived chat. No body.",
    security,
    middleware: write,
    request: { params: SubmissionParams },
    responses: { 200: jsonResponse(Chain, "The chain after the cancel"), ...problems(401, 403, 404, 429) },
  }),
  async (c) => {
    const params = c.req.valid("param");
    return jsonText<Chain, 200>(c, served(await chatService(c).cancelChain(params, params.submissionId)).body, 200);
  },
);
