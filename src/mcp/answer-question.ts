import { z } from "@hono/zod-openapi";
import { Answer } from "../agent/question-shapes";
import { AnswerSubmission } from "../chats/question-schemas";
import { SendMessageHeaders } from "../chats/schemas";
import { idArgument, inChat } from "./arguments";
import { SendMessageInput, SendMessageOutput, sendThenWait } from "./send-message";
import type { ToolContext } from "./tool-context";
import type { Served } from "../chats/service/chat-service";

/**
 * The answer as flat fields, each required and nullable, which every SDK's strict mode takes (a union of objects
 * with optional fields is refused by OpenAI's): exactly the fields of one /v1 answer body are given, the others null.
 */
const FlatAnswer = z
  .strictObject({
    optionIds: z.array(z.string()).nullable().describe("choice: the picked option ids (one; with multiSelect one or more; none when a text is given and allowText)"),
    text: z.string().nullable().describe("text: the answer; choice with allowText: a free text besides or instead of picks"),
    decision: z.enum(["approve", "deny"]).nullable().describe("approval: approve or deny"),
    reason: z.string().nullable().describe("approval or decline: why, optionally"),
    connected: z.literal(true).nullable().describe("connection: true once the user says the connection is made"),
    decline: z.literal(true).nullable().describe("any kind: true when the user will not answer"),
  })
  .transform((flat, context) => {
    const body = Object.fromEntries(Object.entries(flat).filter(([, value]) => value !== null));
    const parsed = Answer.safeParse(body);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) context.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  });

export const AnswerQuestionInput = inChat.extend({
  questionId: idArgument("The question's id: the chat's pendingQuestionId, or send_message's question.id"),
  answer: FlatAnswer.describe(
    "Give the fields of one answer and null for the rest: a choice { optionIds, text (if allowText) }; a text question { text }; " +
      "an approval { decision, reason }; a connection { connected: true }; any kind { decline: true, reason }.",
  ),
  idempotencyKey: SendMessageHeaders.shape["idempotency-key"]
    .optional()
    .describe("A UUID of your choosing: calling again with the same key and the same answer returns the first answer (replayed: true) instead of answering twice."),
  waitSeconds: SendMessageInput.shape.waitSeconds,
});

export const AnswerQuestionOutput = SendMessageOutput.extend({ submission: AnswerSubmission });

/** Answers as POST …/questions/{id}/answer does (a send), waiting and reporting exactly as send_message does. */
export function answerQuestion(args: z.output<typeof AnswerQuestionInput>, context: ToolContext): Promise<Served<unknown>> {
  const { projectId, chatId, questionId, answer, idempotencyKey, waitSeconds } = args;
  const chat = { projectId, chatId };
  const submitted = { kind: "answer" as const, idempotencyKey: idempotencyKey ?? crypto.randomUUID(), questionId: questionId.toLowerCase(), answer };
  return sendThenWait(chat, waitSeconds, context, async () => {
    const sent = await context.chats.submit(chat, submitted);
    return sent.ok ? { ...sent, body: { ...sent.body, questionId: submitted.questionId } } : sent;
  });
}
