import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../auth/gate";
import { createRouter, jsonResponse, jsonText, problems } from "../http/router";
import { CONTENT_MAX, REASON_MAX } from "./limits";
import { submitToChat } from "./message-routes";
import { ANSWER_EXAMPLES, Answer, AnswerSubmission, Question, QuestionParams } from "./question-schemas";
import { chatInProject, chatNotFound, questionNotFound, read, security, write } from "./route-access";
import { SendMessageHeaders } from "./schemas";

/** Questions the agent asks: reading one, and answering it (a send whose text is the answer in words). */
export const questionRoutes = createRouter<GatedEnv>();

questionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/questions/{questionId}",
    operationId: "getQuestion",
    tags: ["Questions"],
    summary: "A question the agent asked, as it stands",
    description:
      "The chat's `pendingQuestionId` and an asking reply's `questionId` name it; the `question` stream event carries it whole. Kept as long as the chat. " +
      "An id the chat does not have (another chat's included), well-formed or not, answers 404 `question_not_found`.",
    security,
    middleware: read,
    request: { params: QuestionParams },
    responses: { 200: jsonResponse(Question, "The question"), ...problems(401, 403, 404, 429) },
  }),
  async (c) => {
    const { access, chat } = await chatInProject(c, "read", c.req.valid("param"));
    const outcome = await chat.question(access.projectId, c.req.valid("param").questionId.toLowerCase());
    if (outcome.kind === "not_found") throw chatNotFound();
    if (outcome.kind === "question_not_found") throw questionNotFound();
    return jsonText<Question, 200>(c, outcome.question, 200);
  },
);

questionRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/chats/{chatId}/questions/{questionId}/answer",
    operationId: "answerQuestion",
    tags: ["Questions"],
    security,
    middleware: write,
    summary: "Answer a pending question: a message to the agent, 202 as a send",
    description:
      "The answer is sent to the chat like a message (the queue, credits, `started`/`queued`, the queue bound) and its `user` message's content is the " +
      "answer in words: a choice's picked labels in the question's order joined with `, ` (then a new line and the text, when one is given); a text its " +
      "text; `Approved.` or `Denied.`, then a space and the reason when given; `Connected.`; `Declined.`, then a space and the reason when given. The " +
      "question is answered (or declined) and the chat no longer awaiting as soon as the answer is accepted. Idempotent like a send, in the same key " +
      "space: the same key and body replay the first 202 (Idempotency-Replayed: true), also after the question closed; the key with another body or " +
      "question, or a key a send or steer used, is 409 `idempotency_key_reused`. Checks run in this order: 400 (the body is not one of the shapes, or a " +
      "field is out of range), 404 (`question_not_found` too), the idempotency key, 409 `chat_archived`, 409 `question_not_pending` (the detail names its " +
      "status), 400 `answer_does_not_fit` (a shape the kind does not take, an unknown or repeated option id, more than one pick without multiSelect, text " +
      `where allowText is false, a choice answered with nothing, words past ${CONTENT_MAX} characters), 409 \`queue_full\`. Reasons are at most ${REASON_MAX} characters.`,
    request: {
      params: QuestionParams,
      headers: SendMessageHeaders,
      body: { required: true, content: { "application/json": { schema: Answer, examples: ANSWER_EXAMPLES } } },
    },
    responses: {
      202: jsonResponse(AnswerSubmission, "Accepted (or the stored first answer to this idempotency-key)", "Idempotency-Replayed"),
      ...problems(400, 401, 403, 404, 409, 429),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const idempotencyKey = c.req.valid("header")["idempotency-key"].toLowerCase();
    const questionId = params.questionId.toLowerCase();
    const submission = await submitToChat(c, params, { kind: "answer", idempotencyKey, questionId, answer: c.req.valid("json") });
    return c.json({ ...submission, questionId }, 202);
  },
);
