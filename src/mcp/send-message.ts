import { z } from "@hono/zod-openapi";
import { Question } from "../chats/question-schemas";
import { Message, SendMessageBody, SendMessageHeaders, Submission, SubmissionState } from "../chats/schemas";
import { inChat } from "./arguments";
import type { ToolContext } from "./tools";
import { type V1Answer, v1Path } from "./v1-call";

// The contract's bound on a call's wait, and on how often progress is sent (about 4 a second).
export const WAIT_SECONDS_MAX = 60;
export const POLL_INTERVAL_MS = 250;

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
});

export const SendMessageOutput = z.object({
  submission: Submission,
  state: SubmissionState.describe("The submission's state when the call answered"),
  reply: Message.nullable().describe("The agent's reply as it then stood; null before it exists"),
  replayed: z.literal(true).optional().describe("Present when an earlier call with this idempotencyKey sent the message; this is its submission"),
  question: Question.nullable().describe(
    "The question the reply asked (answer it with answer_question; kind, options, action or url say what it takes); null when it asked none or the reply was not waited for",
  ),
});

type Outcome = { state: SubmissionState; reply: Message | null };
type Args = z.output<typeof SendMessageInput>;

/** Sends through POST …/messages, then reads the submission's state and reply, waiting for the reply to end when asked. */
export async function sendMessage(args: Args, context: ToolContext): Promise<V1Answer> {
  const { projectId, chatId, content, replyToMessageId, idempotencyKey, waitSeconds } = args;
  // Without a key of the caller's, every call is a new message: a retry is the caller's choice to make.
  const headers = { "idempotency-key": idempotencyKey ?? crypto.randomUUID() };
  const sent = await context.v1<Submission>("POST", v1Path(projectId, "chats", chatId, "messages"), { headers, body: { content, replyToMessageId } });
  if (!sent.ok) return sent;
  return waitAndReport(args, sent, waitSeconds * 1000, context);
}

/** What send_message and answer_question answer after their POST: the submission, its state and reply after the wait (watch), and the question the reply asked. */
export async function waitAndReport<S extends Submission>(
  chat: { projectId: string; chatId: string },
  sent: V1Answer<S> & { ok: true },
  waitMs: number,
  context: ToolContext,
): Promise<V1Answer> {
  const watched = await watch(chat, sent.body.submissionId, waitMs, context);
  if (!watched.ok) return watched;
  const question = await questionAskedBy(chat, watched.body.reply, context);
  if (!question.ok) return question;
  return { ...sent, body: { submission: sent.body, ...watched.body, ...(sent.replayed ? { replayed: true } : {}), question: question.body } };
}

/** The question a reply asked (by its questionId), as it stands now; null when it asked none. */
export async function questionAskedBy(
  { projectId, chatId }: { projectId: string; chatId: string },
  reply: Message | null,
  { v1 }: ToolContext,
): Promise<V1Answer<Question | null>> {
  if (!reply?.questionId) return { ok: true, body: null, replayed: false };
  return v1<Question>("GET", v1Path(projectId, "chats", chatId, "questions", reply.questionId));
}

/** Reads the state until the reply has ended, the submission failed or was cancelled, the time is up or the client cancelled; reports the reply's growth. */
export async function watch(chat: { projectId: string; chatId: string }, submissionId: string, waitMs: number, context: ToolContext): Promise<V1Answer<Outcome>> {
  let timeUp = waitMs === 0;
  const deadline = setTimeout(() => (timeUp = true), waitMs);
  const growth = replyGrowth(context);
  try {
    for (;;) {
      const outcome = await readOutcome(chat, submissionId, context);
      if (!outcome.ok) return outcome;
      const { state, reply } = outcome.body;
      if (reply) await growth(reply.content);
      const ended = state.status === "failed" || state.status === "cancelled" || (reply !== null && reply.status !== "working");
      if (ended || timeUp || context.signal.aborted) return outcome;
      await pause(POLL_INTERVAL_MS, context.signal);
    }
  } finally {
    clearTimeout(deadline);
  }
}

async function readOutcome({ projectId, chatId }: { projectId: string; chatId: string }, submissionId: string, { v1 }: ToolContext): Promise<V1Answer<Outcome>> {
  const state = await v1<SubmissionState>("GET", v1Path(projectId, "chats", chatId, "submissions", submissionId));
  if (!state.ok) return state;
  const replyId = state.body.replyMessageId;
  if (replyId === null) return { ok: true, body: { state: state.body, reply: null }, replayed: false };
  // By its id: one read however long the history has grown since (an old key replayed included).
  const reply = await v1<Message>("GET", v1Path(projectId, "chats", chatId, "messages", replyId));
  if (!reply.ok) return reply;
  return { ok: true, body: { state: state.body, reply: reply.body }, replayed: false };
}

/** Progress for a growing reply: its length so far in characters (strictly increasing), and the text added since the last report. */
function replyGrowth({ progress }: ToolContext) {
  let reported = "";
  return async (content: string) => {
    // A reply only grows while it works; the final text (the agent's own) is in the answer whatever it is.
    if (!progress || content.length <= reported.length || !content.startsWith(reported)) return;
    await progress({ progress: [...content].length, message: content.slice(reported.length) });
    reported = content;
  };
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
