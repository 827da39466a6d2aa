import type { Env } from "../../env";
import type { RoomPublisher } from "./publisher";
import type { QuestionStorage } from "./question-storage";
import type { RoomStorage } from "./room-storage";
import type { AlarmSchedule } from "./schedule";
import type { ChatStreams } from "./streams";
import type { SubmissionStorage } from "./submission-storage";
import type { UsageOutbox } from "./usage-outbox";
import type { WebhookOutbox } from "./webhook-outbox";

/**
 * Whether the chat list shows a change: "listed" (the default) touches the chat, so the list hears of it;
 * "unlisted" is for what the summary does not count (a reply's text while it streams, a steering text
 * cancelled, a failed entry leaving the queue) and for publishing alone.
 */
type Listing = "listed" | "unlisted";

/**
 * One change of the chat: `write` records it in one synchronous stretch; then whatever follows a change
 * follows it (see RoomChanges). Every write goes through here, so none can forget a step.
 */
export type Change = (now: number, write: () => void, listing?: Listing) => void;

/** A change that writes nothing: what is due is published (failed entries whose time ended leave the queue). */
export const nothing = () => {};

/** What the chat object's parts work with: its storage, its publisher and the one way to change anything. */
export type RoomContext = {
  env: Env;
  ctx: DurableObjectState;
  store: RoomStorage;
  submissions: SubmissionStorage;
  questions: QuestionStorage;
  outbox: WebhookOutbox;
  usage: UsageOutbox;
  publisher: RoomPublisher;
  change: Change;
};

/** Work a change may owe that runs in the background (webhook hand-offs, refunds): started, never awaited, by a change. */
type Background = { kick(now: number): void };
/** The tasks with A2A push configs: a change that moved one records its push, in the change's own stretch. */
type Pushes = { notice(now: number): void };
type Followers = {
  store: RoomStorage;
  submissions: SubmissionStorage;
  publisher: RoomPublisher;
  streams: ChatStreams;
  pushes: Pushes;
  handOff: Background;
  refunds: Background;
  schedule: AlarmSchedule;
};

/**
 * The one place that decides what follows a change, in this order: the chat is touched (when listed),
 * failed entries whose 24 hours ended leave the queue, tasks with push configs whose state moved record
 * their push, the log gets the change's events, the streams are woken, webhook events, pushes and refunds
 * owed start in the background, and the alarm is derived again.
 */
export class RoomChanges {
  constructor(private readonly parts: Followers) {}

  readonly apply: Change = (now, write, listing = "listed") => {
    const { store, submissions, pushes, publisher, streams, handOff, refunds, schedule } = this.parts;
    write();
    if (listing === "listed") store.touch(now);
    submissions.expireFailed(now);
    pushes.notice(now);
    publisher.publish(now);
    streams.wake();
    handOff.kick(now);
    refunds.kick(now);
    schedule.reschedule(now);
  };
}
