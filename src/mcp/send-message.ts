import { z } from "@hono/zod-openapi";
import { Question } from "../chats/question-schemas";
import { IF_BUSY, Message, SendMessageBody, SendMessageHeaders, Submission, SubmissionState } from "../chats/schemas";
import { inChat } from "./arguments";
import { ChatFollower } from "../channels/chat-follower";
import { readOutcome, waitForOutcome } from "./reply-wait";
import type { ChatRef, Served } from "../chats/service/chat-service";
import { parsed } from "../chats/service/parsed";
import type { ToolContext } from "./tool-context";

// The contract's bound on a call's wait.
const WAIT_SECONDS_MAX = 60;

export const SendMessageInput = inChat.extend({
  ...SendMessageBody.shape,
  idempotencyKey: SendMessageHeaders.shape["idempotency-key"]
    .optional()
    .describe("A UUID of your choosing: calling again with the same key and the same message returns the first answer (replayed: true) instead of sending it twice."),
  waitSeconds: z
    .number()
    .int()
    .min(0)
    .max(WAIT_SECONDS_MAX)
    .default(0)
    .describe("How long to wait for the reply to finish, 0 to 60 seconds; 0 answers at once. The work goes on after the wait ends."),
  ifBusy: z
    .enum(IF_BUSY)
    .default("queue")
    .describe(
      "What to do when the chat is busy (a reply working, or messages waiting): queue (the default) waits its turn; steer gives the text to the working reply; " +
        "interrupt stops the working reply and runs this first; reject fails with chat_busy and sends nothing. On an idle chat all of them send.",
    ),
});

const Answered = z.object({
  questionId: z.uuid(),
  submissionId: z.uuid().describe("The submission that answered it"),
});

export const SendMessageOutput = z.object({
  submission: Submission.extend({ questionId: z.uuid().optional().describe("The question this submission answered (answer_question)") }).describe("This call's own submission"),
  state: SubmissionState.describe(
    "The state, when the call answered, of the last submission of this call's chain (state.id names it): its own, or the answer to a question its reply asked",
  ),
  reply: Message.nullable().describe("That submission's reply as it then stood; null before it exists"),
  answered: z.array(Answered).describe("The questions this call's chain went on past, in order, each with the submission that answered it; [] when none"),
  replayed: z.literal(true).optional().describe("Present when an earlier call with this idempotencyKey sent the message; this is its submission"),
  question: Question.nullable().describe("The question the reply asked (answer it with answer_question); null when it asked none or is not there yet"),
});

type Args = z.output<typeof SendMessageInput>;

/** Sends as POST …/messages does, then reads the submission's state and reply, waiting for the reply to end when asked. */
export function sendMessage(args: Args, context: ToolContext): Promise<Served<unknown>> {
  const { projectId, chatId, content, replyToMessageId, idempotencyKey, waitSeconds, ifBusy } = args;
  // Without a key of the caller's, every call is a new message: a retry is the caller's choice to make.
  const sent = { kind: "send" as const, idempotencyKey: idempotencyKey ?? crypto.randomUUID(), content, replyToMessageId: replyToMessageId?.toLowerCase() ?? null, ifBusy };
  return sendThenWait({ projectId, chatId }, waitSeconds, context, () => context.chats.submit({ projectId, chatId }, sent));
}

/**
 * A send (a message, or anything else the chat takes as one) followed by its outcome: at once, or
 * after a wait on the chat's event stream. The stream, and with it one of the token's stream places,
 * is taken before anything is sent: with no place free the call does nothing and answers too_many_streams.
 */
export async function sendThenWait(chat: ChatRef, waitSeconds: number, context: ToolContext, send: () => Promise<Served<Submission>>): Promise<Served<unknown>> {
  const following = waitSeconds > 0 && !context.asTask ? await ChatFollower.open(context.chats, chat) : null;
  if (following && !following.ok) return following;
  const follower = following?.body;
  try {
    const sent = await send();
    if (!sent.ok || context.asTask) return sent;
    const { submissionId } = sent.body;
    const outcome = follower ? await waitForOutcome(chat, submissionId, follower, waitSeconds * 1000, context) : await readOutcome(chat, submissionId, context);
    if (!outcome.ok) return outcome;
    const { state, reply } = outcome.body;
    const question = await questionAskedBy(chat, reply, context);
    if (!question.ok) return question;
    return { ...sent, body: { submission: sent.body, state, reply, answered: [], ...(sent.replayed ? { replayed: true } : {}), question: question.body } };
  } finally {
    follower?.close();
  }
}

/** The question a reply asked (by its questionId), as it stands now; null when it asked none. */
async function questionAskedBy(chat: ChatRef, reply: Message | null, { chats }: ToolContext): Promise<Served<Question | null>> {
  if (!reply?.questionId) return { ok: true, body: null, replayed: false };
  return parsed(await chats.question(chat, reply.questionId));
}
