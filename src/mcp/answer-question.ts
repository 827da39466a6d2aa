import type { z } from "@hono/zod-openapi";
import { AnswerSubmission } from "../chats/question-schemas";
import { SendMessageHeaders } from "../chats/schemas";
import { idArgument, inChat } from "./arguments";
import { SendMessageInput, SendMessageOutput, sendThenWait } from "./send-message";
import { type V1Answer, v1Path } from "./v1-call";
import { Answer } from "../agent/question-shapes";
import type { ToolContext } from "./tool-context";

export const AnswerQuestionInput = inChat.extend({
  questionId: idArgument("The question's id: the chat's pendingQuestionId, or send_message's question.id"),
  answer: Answer.describe(
    "A choice: { optionIds, text? } (text if allowText); text: { text }; approval: { decision, reason? }; connection: { connected: true }; any: { decline: true }",
  ),
  idempotencyKey: SendMessageHeaders.shape["idempotency-key"]
    .optional()
    .describe("A UUID of your choosing: calling again with the same key and the same answer returns the first answer (replayed: true) instead of answering twice."),
  waitSeconds: SendMessageInput.shape.waitSeconds,
});

export const AnswerQuestionOutput = SendMessageOutput.extend({ submission: AnswerSubmission });

/** Answers through POST …/questions/{id}/answer (a send), waiting and reporting exactly as send_message does. */
export function answerQuestion(args: z.output<typeof AnswerQuestionInput>, context: ToolContext): Promise<V1Answer> {
  const { projectId, chatId, questionId, answer, idempotencyKey, waitSeconds } = args;
  const headers = { "idempotency-key": idempotencyKey ?? crypto.randomUUID() };
  return sendThenWait({ projectId, chatId }, waitSeconds, context, () =>
    context.v1<AnswerSubmission>("POST", v1Path(projectId, "chats", chatId, "questions", questionId, "answer"), { headers, body: answer }),
  );
}
