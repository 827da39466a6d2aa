import type { Message, QueueEntry, SubmissionState } from "../chats/schemas";
import type { ChatFollower, FollowedEvent } from "../channels/chat-follower";
import { endsSubmission, waitOnChat } from "../channels/chat-wait";
import type { ChatRef, Served } from "../chats/service/chat-service";
import type { ToolContext } from "./tool-context";

// Progress goes out at most about 4 times a second, whatever rate the agent writes at.
const PROGRESS_INTERVAL_MS = 250;

/** Where a submission stands: its state and its reply (null before it exists); eventId: the chat event the reply is current to. */
export type Outcome = { state: SubmissionState; reply: Message | null };
type Read = Served<Outcome>;

const hasEnded = ({ state, reply }: Outcome) => state.status === "failed" || state.status === "cancelled" || (reply !== null && reply.status !== "working");

/** The submission's state and its reply (two calls at most). */
export async function readOutcome(chat: ChatRef, submissionId: string, { chats }: Pick<ToolContext, "chats">): Promise<Read> {
  const state = await chats.submission(chat, submissionId);
  if (!state.ok) return state;
  const replyId = state.body.replyMessageId;
  if (replyId === null) return { ok: true, body: { state: state.body, reply: null }, replayed: false };
  // By its id: one read however long the history has grown since (an old key replayed included).
  const reply = await chats.message(chat, replyId);
  if (!reply.ok) return reply;
  return { ok: true, body: { state: state.body, reply: reply.body }, replayed: false, eventId: reply.eventId };
}

/**
 * Waits, on the chat's own event stream, until the submission's reply has ended, the submission has failed or been
 * cancelled, the time is up or the caller went away. The state is read again only when an event may have ended it (the
 * reply's end, a failure, a removal from the queue); the reply as it starts and its deltas after the read become progress.
 */
export async function waitForOutcome(chat: ChatRef, submissionId: string, follower: ChatFollower, waitMs: number, context: ToolContext): Promise<Served<Outcome>> {
  const progress = replyProgress(context);
  const bounds = { stop: AbortSignal.any([context.signal, AbortSignal.timeout(waitMs)]), hungUp: context.signal, stillAdmitted: () => context.chats.stillAdmitted() };
  // Where the submission last stood in the queue: leaving it from dispatching is its start, from anywhere else a cancel.
  let inQueue: string | undefined;
  const read = await waitOnChat(follower, bounds, {
    read: async () => {
      const outcome = await readOutcome(chat, submissionId, context);
      if (outcome.ok && outcome.body.reply) await progress.grewTo(outcome.body.reply.content);
      inQueue = outcome.ok ? outcome.body.state.status : inQueue;
      return outcome;
    },
    settled: hasEnded,
    moves: (event, current) => mayEnd(event, submissionId, current, inQueue),
    passing: async (event, current, eventId) => {
      if (event.type === "queue.entry" && event.data.includes(submissionId)) inQueue = (JSON.parse(event.data) as QueueEntry).status;
      else if (event.type === "message" && event.data.includes(submissionId)) {
        // The reply as it starts (or as a snapshot of it): its text so far, without a read.
        const message = JSON.parse(event.data) as Message;
        if (message.role === "owner" && message.submissionId === submissionId) await progress.grewTo((current.reply = message).content);
      } else if (event.type === "message.delta" && current.reply && event.id > (eventId ?? 0) && event.data.includes(current.reply.id)) {
        const delta = JSON.parse(event.data) as { id: string; text: string };
        if (delta.id === current.reply.id) await progress.grewTo((current.reply.content += delta.text));
      }
      return undefined;
    },
    pacer: progress,
  });
  if (read.ok && read.body.reply) await progress.grewTo(read.body.reply.content, true);
  return read;
}

/**
 * Whether an event may end the submission (or show its reply): its reply's end, its failure, its removal from the queue
 * other than its start (a cancel), or the take of its text by a running task (a steering send, whose reply is that task's).
 */
function mayEnd(event: FollowedEvent, submissionId: string, { state, reply }: Outcome, inQueue: string | undefined): boolean {
  if (endsSubmission(event, submissionId, inQueue)) return true;
  if (event.type !== "message") return false;
  // A steering send's text taken by the running task, or the end of that task's reply, which is the send's reply.
  const taken = state.status === "steering" && event.data.includes(submissionId);
  if (!taken && !(reply && event.data.includes(reply.id))) return false;
  const message = JSON.parse(event.data) as Message;
  if (message.role === "user") return taken && message.submissionId === submissionId;
  return message.id === reply?.id && message.status !== "working";
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
