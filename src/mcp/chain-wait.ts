import type { Chain } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import { fromBase64Url } from "../crypto";
import { ANSWER_REFUSED } from "../chats/room-calls";
import type { ChatFollower, FollowedEvent } from "../channels/chat-follower";
import { endsSubmission, waitOnChat } from "../channels/chat-wait";
import type { Message, QueueEntry } from "../chats/schemas";
import { type ChainView, type OwnSubmission, readChain, viewChain } from "./chain-view";
import type { Modes } from "./elicitation";
import { replyProgress } from "./reply-wait";
import { problemResult, type ToolContext, toolError } from "./tool-context";
import type { Served } from "../chats/service/chat-service";
import type { ApiError } from "../http/problem";

export type ChainRef = { projectId: string; chatId: string; own: OwnSubmission };
/** Where the chain stood when the wait ended: its view from the call's submission, and the chain itself. */
export type ChainWait = { view: ChainView; chain: Chain };
/** An answer this credential sent from a form was refused: the problem+json text it was refused with, as the chat told it. */
export type RefusedAnswer = { ok: false; refusedAnswer: string; problem?: undefined };

/** A wait's refusal as a tool's error result. */
export const waitError = (waited: { ok: false; problem: ApiError } | RefusedAnswer, requestId: string) =>
  waited.problem ? problemResult(waited.problem, requestId) : toolError(waited.refusedAnswer);

/**
 * Whether an event may move the chain's view, so it is read again: a question's change (an answer names the submission
 * that goes on with the chain), the end of a reply of its submissions, or one of them failing or leaving the queue. A
 * reply as it starts and grows, and other submissions' events, are passed over unread.
 */
function movesChain(event: FollowedEvent, chain: Chain, inQueue: Map<string, string>): boolean {
  return event.type === "question" || chain.links.some(({ submissionId }) => endsSubmission(event, submissionId, inQueue.get(submissionId)));
}

/** The reply of the chain's end, as it starts (a message event naming its submission), for progress. */
function startedReply(event: FollowedEvent, chain: Chain): Message | undefined {
  if (event.type !== "message" || !event.data.includes(chain.end.id)) return undefined;
  const message = JSON.parse(event.data) as Message;
  return message.role === "owner" && message.submissionId === chain.end.id ? message : undefined;
}

/**
 * Waits on the chat's event stream until the call's chain needs input, has ended, the time is up or the caller went
 * away, reading the chain (one call to the chat's object) only when an event may have moved it. `onInput` hears of
 * each question the view reaches; when it answers "wait" the call goes on waiting (a 2025 client answers out of band),
 * else the wait ends there.
 */
export async function waitOnChain(
  ref: ChainRef,
  follower: ChatFollower,
  waitMs: number,
  modes: Modes,
  context: ToolContext,
  onInput: (question: Question) => Promise<"wait" | "end"> = async () => "end",
): Promise<Served<ChainWait> | RefusedAnswer> {
  // The end's reply as it grows becomes progress, when the caller asked for it (at most 4 a second; the first reply's only,
  // since progress counts one text's length and only ever grows).
  const progress = replyProgress(context);
  let reply: { id: string; content: string } | undefined;
  // Where the chain's submissions last stood in the queue, as its end was read and its entries' events said.
  const inQueue = new Map<string, string>();
  const bounds = { stop: AbortSignal.any([context.signal, AbortSignal.timeout(waitMs)]), hungUp: context.signal, stillAdmitted: () => context.chats.stillAdmitted() };
  const waited = await waitOnChat<ChainWait & { asking?: boolean }, RefusedAnswer>(follower, bounds, {
    read: async () => {
      const chain = await readChain(ref, context.chats);
      if (!chain.ok) return chain;
      const view = await viewChain(ref, chain.body, modes, context);
      if (!view.ok) return view;
      inQueue.set(chain.body.end.id, chain.body.end.status);
      const current = chain.body.reply;
      reply = current ? { id: current.id, content: current.content } : undefined;
      if (reply) await progress.grewTo(reply.content);
      // A question the view reaches ends the wait unless the caller waits on (its client answers out of band).
      const asking = view.body.status === "input_required" && (await onInput(view.body.question)) === "end";
      return { ...chain, body: { view: view.body, chain: chain.body, asking } };
    },
    settled: ({ view, asking }) => view.status === "completed" || view.status === "cancelled" || asking === true,
    moves: (event, { chain }) => movesChain(event, chain, inQueue),
    passing: async (event, { chain }) => {
      if (event.type === ANSWER_REFUSED) {
        // An answer this credential sent from a form was refused: the call that asked ends with that problem.
        const [questionId, problem] = event.data.split(" ");
        const bytes = questionId === chain.question?.id ? fromBase64Url(problem ?? "") : undefined;
        return bytes ? { end: { ok: false, refusedAnswer: new TextDecoder().decode(bytes) } } : undefined;
      }
      if (event.type === "queue.entry") {
        const entry = JSON.parse(event.data) as QueueEntry;
        inQueue.set(entry.id, entry.status);
      }
      const started = startedReply(event, chain);
      if (started) await progress.grewTo((reply = { id: started.id, content: started.content }).content);
      else if (event.type === "message.delta" && reply && event.data.includes(reply.id)) {
        const delta = JSON.parse(event.data) as { id: string; text: string };
        if (delta.id === reply.id) await progress.grewTo((reply.content += delta.text));
      }
      return undefined;
    },
    pacer: progress,
  });
  if (waited.ok && waited.body.chain.reply) await progress.grewTo(waited.body.chain.reply.content, true);
  return waited;
}
