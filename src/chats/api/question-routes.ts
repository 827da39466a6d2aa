import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { createRouter, jsonResponse, jsonText, problems } from "../../http/router";
import { submitToChat } from "./message-routes";
import { AnswerSubmission, Question, QuestionParams } from "../question-schemas";
import { chatService, served } from "../service/chat-service";
import { SendMessageHeaders } from "../schemas";
import { read, security, write } from "../../projects/guards";
import { CONTENT_MAX, REASON_MAX } from "../../agent/limits";
import { ANSWER_EXAMPLES, Answer } from "../../agent/question-shapes";

/** Questions the agent asks: reading one, and answering it (a send whose text is the answer in words). */
export const questionRoutes = createRouter<GatedEnv>();

questionRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/questions/{questionId}",
    operationId: "getQuestion",
    tags: ["Questions"],
    summary: "A question the agent asked, as it stands",
    description: "Named by the chat's `pendingQuestionId` and the asking reply's `questionId`; kept as long as the chat. Another chat's id: 404 `question_not_found`.",
    security,
    middleware: read,
    request: { params: QuestionParams },
    responses: { 200: jsonResponse(Question, "The question"), ...problems(401, 403, 404, 429) },
  }),
  async (c) => {
    const params = c.req.valid("param");
    return jsonText<Question, 200>(c, served(await chatService(c).question(params, params.questionId)).body, 200);
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
      "A send (queue, credits, `started`/`queued`, the queue bound; keys shared with sending and steering) whose `user` message is the answer in " +
      "words: the picked labels in the question's order joined with `, ` (then a new line and the text), the text, `Approved.`/`Denied.`, " +
      "`Connected.`, `Declined.` (then a space and the reason, if any). The question closes as soon as it is accepted. Checks in order: 400, 404 " +
      "(`question_not_found` too), the idempotency key (a replay is 202, also after the question closed), 409 `chat_archived`, 409 " +
      `\`question_not_pending\`, 400 \`answer_does_not_fit\`, 409 \`queue_full\`. Texts up to ${CONTENT_MAX} characters, reasons ${REASON_MAX}.`,
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
    const idempotencyKey = c.req.valid("header")["idempotency-key"];
    const { questionId } = params;
    const submission = await submitToChat(c, params, { kind: "answer", idempotencyKey, questionId, answer: c.req.valid("json") });
    return c.json({ ...submission, questionId }, 202);
  },
);
