import type { Chain } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import { fromBase64Url } from "../crypto";
import { ANSWER_REFUSED } from "../chats/room-calls";
import type { ChatFollower, FollowedEvent } from "../channels/chat-follower";
import { type ChainView, type OwnSubmission, readChain, viewChain } from "./chain-view";
import type { Modes } from "./elicitation";
import { replyProgress } from "./reply-wait";
import type { ToolContext } from "./tool-context";
import type { V1Answer } from "../channels/v1-call";

export type ChainRef = { projectId: string; chatId: string; own: OwnSubmission };
/** Where the chain stood when the wait ended: its view from the call's submission, and the chain itself. */
export type ChainWait = { view: ChainView; chain: Chain };

/** The ids an event that moves the chain names: its submissions, its end's reply and the question it asked. */
function namedIds(chain: Chain): string[] {
  return [...chain.links.map((link) => link.submissionId), chain.reply?.id, chain.question?.id].filter((id): id is string => id !== undefined);
}

/**
 * Whether an event may move the chain, so it is read again: a question's change (an answer names the submission that
 * goes on with the chain), or an event naming one of its ids. A reply's text as it grows, and other submissions' and
 * replies' events, are passed over unread.
 */
const movesChain = (event: FollowedEvent, named: string[]) => event.type !== "message.delta" && (event.type === "question" || named.some((id) => event.data.includes(id)));

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
): Promise<V1Answer<ChainWait>> {
  const stop = AbortSignal.any([context.signal, AbortSignal.timeout(waitMs)]);
  const read = async (): Promise<V1Answer<ChainWait>> => {
    const chain = await readChain(ref, context.v1);
    if (!chain.ok) return chain;
    const view = await viewChain(ref, chain.body, modes, context);
    return view.ok ? { ok: true, body: { view: view.body, chain: chain.body }, replayed: false } : view;
  };
  // The end's reply as it grows becomes progress, when the caller asked for it (at most 4 a second; the first reply's only,
  // since progress counts one text's length and only ever grows).
  const progress = replyProgress(context);
  let reply: { id: string; content: string } | undefined;
  const reported = async (wait: V1Answer<ChainWait>) => {
    const current = wait.ok ? wait.body.chain.reply : null;
    reply = current ? { id: current.id, content: current.content } : undefined;
    if (reply) await progress.grewTo(reply.content);
    return wait;
  };
  let last: V1Answer<ChainWait> | undefined;
  try {
    last = await reported(await read());
    while (last.ok && !stop.aborted) {
      const { view } = last.body;
      if (view.status === "completed" || view.status === "cancelled") break;
      if (view.status === "input_required" && (await onInput(view.question)) === "end") break;
      const named = namedIds(last.body.chain);
      let event: FollowedEvent | null;
      for (;;) {
        event = await follower.next(progress.due(stop));
        if (event === null && !stop.aborted && progress.pending()) {
          await progress.flush();
          continue;
        }
        if (event?.type === ANSWER_REFUSED) {
          // An answer this credential sent from a form was refused: the call that asked ends with that problem.
          const [questionId, problem] = event.data.split(" ");
          const bytes = questionId === last.body.chain.question?.id ? fromBase64Url(problem ?? "") : undefined;
          if (bytes) return { ok: false, problem: new TextDecoder().decode(bytes) };
          continue;
        }
        if (event === null || movesChain(event, named)) break;
        if (event.type === "message.delta" && reply && event.data.includes(reply.id)) {
          const delta = JSON.parse(event.data) as { id: string; text: string };
          if (delta.id === reply.id) await progress.grewTo((reply.content += delta.text));
        }
      }
      // The server ended the stream (a revocation, a lost access, its age) or the wait is over: the checks below tell.
      if (event === null) break;
      last = await reported(await read());
    }
  } finally {
    follower.close();
  }
  if (context.signal.aborted) return last;
  const admitted = await context.stillAdmitted();
  if (!admitted.ok) return admitted;
  // As it stands now, which also answers not_found once the project is no longer the caller's.
  const final = stop.aborted || !last.ok ? await read() : last;
  if (final.ok && final.body.chain.reply) await progress.grewTo(final.body.chain.reply.content, true);
  return final;
}
