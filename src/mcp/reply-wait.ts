import type { Message, SubmissionState } from "../chats/schemas";
import type { ChatFollower } from "../channels/chat-follower";
import { type V1Answer, v1Path } from "../channels/v1-call";
import type { ToolContext } from "./tool-context";

// Progress goes out at most about 4 times a second, whatever rate the agent writes at.
const PROGRESS_INTERVAL_MS = 250;

export type ChatRef = { projectId: string; chatId: string };
/** Where a submission stands: its state and its reply (null before it exists); eventId: the chat event the reply is current to. */
export type Outcome = { state: SubmissionState; reply: Message | null };
type Read = V1Answer<Outcome> & { eventId?: number };

const hasEnded = ({ state, reply }: Outcome) => state.status === "failed" || state.status === "cancelled" || (reply !== null && reply.status !== "working");

/** The submission's state and its reply, read through /v1 (two calls at most). */
export async function readOutcome({ projectId, chatId }: ChatRef, submissionId: string, { v1 }: Pick<ToolContext, "v1">): Promise<Read> {
  const state = await v1<SubmissionState>("GET", v1Path(projectId, "chats", chatId, "submissions", submissionId));
  if (!state.ok) return state;
  const replyId = state.body.replyMessageId;
  if (replyId === null) return { ok: true, body: { state: state.body, reply: null }, replayed: false };
  // By its id: one read however long the history has grown since (an old key replayed included).
  const reply = await v1<Message>("GET", v1Path(projectId, "chats", chatId, "messages", replyId));
  if (!reply.ok) return reply;
  return { ok: true, body: { state: state.body, reply: reply.body }, replayed: false, eventId: reply.eventId };
}

/**
 * Waits, on the chat's own event stream, until the submission's reply has ended, the submission has
 * failed or been cancelled, the time is up or the caller went away. Nothing is polled: the state is
 * read again only when an event names the submission (a few times over a task's life), and the
 * reply's deltas after that read become progress. Before it answers, the caller must still be
 * admitted and may still read the chat, so nothing written after a revocation or a lost access is told.
 */
export async function waitForOutcome(chat: ChatRef, submissionId: string, follower: ChatFollower, waitMs: number, context: ToolContext): Promise<V1Answer<Outcome>> {
  const stop = AbortSignal.any([context.signal, AbortSignal.timeout(waitMs)]);
  const progress = replyProgress(context);
  let read = await readOutcome(chat, submissionId, context);
  try {
    while (read.ok && !hasEnded(read.body) && !stop.aborted) {
      const event = await follower.next(progress.due(stop));
      if (event === null) {
        if (stop.aborted) break;
        if (progress.pending()) {
          await progress.flush();
          continue;
        }
        // The server ended the stream: a revocation, a lost access, or its age; the checks below tell which.
        break;
      }
      // Cheap before parsing: events of other submissions and other replies are passed over unread.
      if (event.data.includes(submissionId)) {
        read = await readOutcome(chat, submissionId, context);
        if (read.ok && read.body.reply) await progress.grewTo(read.body.reply.content);
        continue;
      }
      const reply = read.body.reply;
      if (event.type === "message.delta" && reply && event.id > (read.eventId ?? 0) && event.data.includes(reply.id)) {
        const delta = JSON.parse(event.data) as { id: string; text: string };
        if (delta.id !== reply.id) continue;
        reply.content += delta.text;
        await progress.grewTo(reply.content);
      }
    }
  } finally {
    follower.close();
  }
  // The caller hung up: nobody reads the answer.
  if (context.signal.aborted) return read;
  const admitted = await context.stillAdmitted();
  if (!admitted.ok) return admitted;
  // As it stands now, which also answers not_found once the project is no longer the caller's.
  if (!read.ok || !hasEnded(read.body)) read = await readOutcome(chat, submissionId, context);
  if (read.ok && read.body.reply) await progress.grewTo(read.body.reply.content, true);
  return read;
}

/**
 * Progress for a growing reply: its length so far in characters (strictly increasing) and the text
 * added since the last report, at most one report per PROGRESS_INTERVAL_MS; a report held back by the
 * interval goes out when it ends (`due` wakes the wait for it) or with the answer.
 */
export function replyProgress({ progress }: Pick<ToolContext, "progress">) {
  let reported = "";
  let waiting: string | undefined;
  let quietUntil = 0;
  const send = async (content: string) => {
    waiting = undefined;
    // A reply only grows while it works; the final text (the agent's own) is in the answer whatever it is.
    if (!progress || content.length <= reported.length || !content.startsWith(reported)) return;
    await progress({ progress: [...content].length, message: content.slice(reported.length) });
    reported = content;
    quietUntil = performance.now() + PROGRESS_INTERVAL_MS;
  };
  return {
    async grewTo(content: string, now = false): Promise<void> {
      if (now || performance.now() >= quietUntil) await send(content);
      else waiting = content;
    },
    pending: () => waiting !== undefined,
    flush: () => send(waiting ?? reported),
    /** The wait's signal, cut short when a held-back report is due. */
    due(stop: AbortSignal): AbortSignal {
      return waiting === undefined ? stop : AbortSignal.any([stop, AbortSignal.timeout(Math.max(0, quietUntil - performance.now()))]);
    },
  };
}
