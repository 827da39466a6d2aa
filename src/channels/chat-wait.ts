import type { Message, QueueEntry } from "../chats/schemas";
import type { Served } from "../chats/service/chat-service";
import type { ChatFollower, FollowedEvent } from "./chat-follower";

/** What a wait reads events from: a chat's follower (or, in a test, anything that hands events out the same way). */
type Events = Pick<ChatFollower, "next" | "close">;

/** What paces a wait's reports (MCP progress): a report held back wakes the wait when it is due. */
type Pacer = { due(stop: AbortSignal): AbortSignal; pending(): boolean; flush(): Promise<void> };

/**
 * One wait on a chat's events, whatever the channel: what it reads (what the channel shows), when that has settled,
 * which events may move it (only those are read again for), and what it does with the others (a reply's growth
 * shown as progress, say). An event may also end the wait with an answer of the channel's own.
 */
export type ChatWait<T, E> = {
  read(): Promise<Served<T>>;
  settled(current: T): boolean;
  moves(event: FollowedEvent, current: T): boolean;
  /** eventId: the newest chat event the last read showed, where the read says. */
  passing?(event: FollowedEvent, current: T, eventId: number | undefined): Promise<{ end: E } | undefined>;
  pacer?: Pacer;
};

/**
 * Whether an event may end a submission: its reply's end (or its error), its failure, or its removal from the queue other
 * than its start (leaving from `dispatching`, where it last stood, is its start, which its reply tells; from anywhere
 * else, a cancel). What the waits read again for.
 */
export function endsSubmission(event: FollowedEvent, submissionId: string, inQueue: string | undefined): boolean {
  // Cheap before parsing: events of other submissions are passed over unread.
  if (!event.data.includes(submissionId)) return false;
  switch (event.type) {
    case "queue.removed":
      return inQueue !== "dispatching";
    case "queue.entry":
      return (JSON.parse(event.data) as QueueEntry).status === "failed";
    case "message": {
      const message = JSON.parse(event.data) as Message;
      return message.submissionId === submissionId && message.role !== "user" && message.status !== "working";
    }
  }
  return false;
}

/** When a wait ends: its time (or the caller's cancellation), the caller's hang-up, and whether the caller is still admitted. */
export type WaitBounds = { stop: AbortSignal; hungUp: AbortSignal; stillAdmitted(): Promise<Served<null>> };

/**
 * Reads, then waits on the follower until what it read has settled, the time is up, the caller went away or the server
 * ended the stream, reading again only after an event that may have moved it: nothing is polled. Before it answers,
 * the caller must still be admitted and, unless the last read had settled, it is read again as it stands now (which
 * also answers not_found once the project is no longer the caller's), so nothing written after a revocation or a lost
 * access is told. The follower is closed whatever happens.
 */
export async function waitOnChat<T, E = never>(follower: Events, bounds: WaitBounds, wait: ChatWait<T, E>): Promise<Served<T> | E> {
  const { stop } = bounds;
  let last = await wait.read();
  try {
    waiting: while (last.ok && !wait.settled(last.body) && !stop.aborted) {
      const { body: current, eventId } = last;
      for (;;) {
        const event = await follower.next(wait.pacer ? wait.pacer.due(stop) : stop);
        if (event === null) {
          if (!stop.aborted && wait.pacer?.pending()) {
            await wait.pacer.flush();
            continue;
          }
          // The time is up, or the server ended the stream (a revocation, a lost access, its age): the checks below tell.
          break waiting;
        }
        if (wait.moves(event, current)) break;
        const ended = await wait.passing?.(event, current, eventId);
        if (ended) return ended.end;
      }
      last = await wait.read();
    }
  } finally {
    follower.close();
  }
  // The caller hung up: nobody reads the answer.
  if (bounds.hungUp.aborted) return last;
  const admitted = await bounds.stillAdmitted();
  if (!admitted.ok) return admitted;
  return last.ok && wait.settled(last.body) ? last : await wait.read();
}
