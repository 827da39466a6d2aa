import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { emptyBodyIsNone } from "../../http/json-body";
import { createRouter, jsonBody, jsonResponse, problems } from "../../http/router";
import { SUBMIT_DESCRIPTION, submitTo } from "./message-routes";
import { chatService, served } from "../service/chat-service";
import { ChatParams, Message, MessageParams, SendMessageBody, SendMessageHeaders, StopBody, Submission, SubmissionParams } from "../schemas";
import { security, write } from "../../projects/guards";
import { STEERING_PER_TASK } from "../../agent/limits";

/** Control of running work: stop a reply, cancel a submission, steer a running task. */
export const controlRoutes = createRouter<GatedEnv>();

controlRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/messages/{messageId}/stop",
    operationId: "stopMessage",
    tags: ["Control"],
    summary: "Stop an agent reply that is working",
    description:
      "A `working` reply ends at once as `interrupted_by_user`, keeping exactly what it had written; output the agent sends for that task later is " +
      "discarded, and the next queued submission runs. Credits taken for the task are not returned. A reply that has already ended is answered as " +
      "it is, so retrying a stop is safe and a late stop never touches the next task. Allowed on an archived chat. No body, an empty body, or `{}`.",
    security,
    middleware: [...write, emptyBodyIsNone],
    request: { params: MessageParams, body: { ...jsonBody(StopBody), required: false } },
    responses: {
      200: jsonResponse(Message, "The reply as it stands after the call"),
      ...problems(400, 401, 403, 404, 429),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    return c.json(served(await chatService(c).stopReply(params, params.messageId)).body, 200);
  },
);

controlRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{projectId}/chats/{chatId}/queue/{submissionId}",
    operationId: "cancelSubmission",
    tags: ["Control"],
    summary: "Cancel a submission that has not started",
    description:
      "An entry that is `queued`, `steering` or `failed` leaves the queue for good: it never runs and is never charged, and its idempotency-key " +
      "then answers 409 `submission_cancelled`. Cancelling it again answers 204. One that is dispatching or whose task started answers 409 " +
      "`submission_started` (stop its reply instead). Allowed on an archived chat.",
    security,
    middleware: write,
    request: { params: SubmissionParams },
    responses: { 204: { description: "Cancelled (now or before)" }, ...problems(401, 403, 404, 409, 429) },
  }),
  async (c) => {
    const params = c.req.valid("param");
    served(await chatService(c).cancelSubmission(params, params.submissionId));
    return c.body(null, 204);
  },
);

controlRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/steer",
    operationId: "steerChat",
    tags: ["Control"],
    security,
    middleware: write,
    summary: "Steer the running task: a text its agent takes at its next step",
    description:
      "While a task runs, the submission waits in the queue with status `steering` (disposition `queued`) until the running agent takes it at its " +
      `next step (at most ${STEERING_PER_TASK} per task); taken, it becomes a \`user\` message carrying the running task's taskId and costs nothing. ` +
      "If the task ends first (a stop included), the entry becomes `queued` in its place in submission order and runs as a task of its own. " +
      `With no task running it is sent exactly like a message. ${SUBMIT_DESCRIPTION}`,
    request: { params: ChatParams, headers: SendMessageHeaders, body: jsonBody(SendMessageBody) },
    responses: {
      202: jsonResponse(Submission, "Accepted (or the stored first answer to this idempotency-key)", "Idempotency-Replayed"),
      ...problems(400, 401, 403, 404, 409, 429),
    },
  }),
  (c) => submitTo(c, "steer"),
);
