import type { Env } from "../../env";
import { log } from "../../log";
import { projectState } from "../../projects/access";
import { type Change, nothing } from "./change";
import type { QuestionStorage } from "./question-storage";
import type { RoomStorage } from "./room-storage";
import type { AlarmSchedule, DeferredJob } from "./schedule";
import type { SubmissionStorage } from "./submission-storage";
import type { TaskIndexFeed } from "./task-index";
import type { UsageOutbox } from "./usage-outbox";
import type { WebhookOutbox } from "./webhook-outbox";

// A refund or a chat-list update that failed is tried again this much later.
const RETRY_MS = 5_000;
// The chat list may lag a busy chat by this much: a burst of sends, or a task's start and end, reach it as one update
// (each update is a call and a write in two objects, so a chat at work pays it about once every two seconds, not per change).
export const LIST_SYNC_DELAY_MS = 2_000;
// Tasks told to the chat list per sync at most (a chat from before the index catches up over its next syncs).
const TASKS_PER_SYNC = 500;

/**
 * Gives failed tasks' credits back through the paying account's ledger, and takes them off the sending credential's count (both idempotent), in the background
 * after the change that owes them and from the alarm; on failure it is due again shortly.
 */
export class Refunds implements DeferredJob {
  private retryAt = 0;
  // The refunds under way, so two never run at once.
  private running: Promise<void> | undefined;

  constructor(
    private readonly env: Env,
    private readonly ctx: DurableObjectState,
    private readonly store: RoomStorage,
    private readonly schedule: AlarmSchedule,
  ) {}

  dueAt(): number | undefined {
    return this.store.pendingRefunds().length > 0 ? this.retryAt : undefined;
  }

  /** After a change: refunds owed start in the background (not while a failed one waits for its retry); the alarm is derived again once they settle. */
  kick(now: number): void {
    if (this.running === undefined && now >= this.retryAt && this.store.pendingRefunds().length > 0) this.ctx.waitUntil(this.start());
  }

  /** From the alarm: the refunds owed, or the ones under way. */
  run(): Promise<void> {
    return this.running ?? this.start();
  }

  /** Resolves once no refund is under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  private start(): Promise<void> {
    const running = this.giveBack().finally(() => {
      this.running = undefined;
      this.schedule.reschedule(Date.now());
    });
    this.running = running;
    return running;
  }

  private async giveBack(): Promise<void> {
    for (const refund of this.store.pendingRefunds()) {
      try {
        // Only a task charged before ledgers existed has no account recorded: its payer was the project's owner.
        const accountId = refund.account_id ?? (await projectState(this.env.DB, this.store.chat()!.project_id)).value?.ownerAccountId;
        if (accountId) await this.env.ACCOUNT_LEDGER.getByName(accountId).refund(accountId, refund.task_id);
        // Both are idempotent: a retry after either gives nothing twice.
        if (refund.credential) await this.env.TOKEN_GATE.getByName(refund.credential).refundCredits(refund.task_id);
        this.store.refunded(refund.task_id);
      } catch (error) {
        log.warn("refund_failed", { chatId: this.store.chat()!.id }, error);
        this.retryAt = Date.now() + RETRY_MS;
        return;
      }
    }
  }
}

/**
 * Sends the chat's summary to the project's chat list (newer versions win there); nothing is lost when it fails.
 * The answer says whether the project has webhook endpoints, so a chat learns it at no call of its own.
 */
export class ChatListSync implements DeferredJob {
  // Riding along with an alarm that is here anyway saves a wake-up, but only near the end of the delay: a chat whose
  // every dispatch carried its sync would call the list once a turn however long the delay.
  readonly earlyMs = LIST_SYNC_DELAY_MS / 2;
  // Since when the chat list is behind, as first seen: the chat's last change then (a wake's first look after a restart
  // counts from it too, so an object restarted before every alarm still tells its list once its chat is still for the delay).
  private behindSince: number | undefined;
  private retryAt = 0;
  // The last told task's seq at which no task was found waiting: asked again only once it moves (a new task comes with a
  // change the list must hear of anyway), so a chat in step with its list reads nothing more at each change.
  private noTaskAfter: number | undefined;

  constructor(
    private readonly env: Env,
    private readonly store: RoomStorage,
    // Ended tasks' usage rides along, so the project's daily usage costs a task's end no call of its own.
    private readonly usage: UsageOutbox,
    private readonly outbox: WebhookOutbox,
    // The chat's new tasks ride along too, so the list knows which chat a task is in (channels that name only a task),
    // and so do the states its tasks entered, for the project's task index.
    private readonly tasksAfter: (seq: number, limit: number) => { id: string; seq: number }[],
    private readonly taskIndex: TaskIndexFeed,
  ) {}

  dueAt(now: number): number | undefined {
    const chat = this.store.chat();
    // Also due while tasks wait to be told (a chat from before the index, woken by a read, tells them without a change).
    if (!chat || (chat.indexed_version >= chat.version && !this.usage.hasWaiting() && !this.tasksWait(chat.tasks_listed_seq))) return undefined;
    this.behindSince ??= Math.min(now, Date.parse(chat.updated_at));
    return Math.max(this.behindSince + LIST_SYNC_DELAY_MS, this.retryAt);
  }

  private tasksWait(listedSeq: number): boolean {
    if (this.noTaskAfter === listedSeq) return false;
    const waiting = this.tasksAfter(listedSeq, 1).length > 0;
    if (!waiting) this.noTaskAfter = listedSeq;
    return waiting;
  }

  async run(): Promise<void> {
    const chat = this.store.chat();
    const usage = this.usage.waiting();
    const tasks = chat ? this.tasksAfter(chat.tasks_listed_seq, TASKS_PER_SYNC) : [];
    this.taskIndex.follow(tasks);
    const states = chat ? this.taskIndex.changes(TASKS_PER_SYNC) : [];
    if (!chat || (chat.indexed_version >= chat.version && usage.length === 0 && tasks.length === 0 && states.length === 0)) return;
    try {
      const list = this.env.PROJECT_CHATS.getByName(chat.project_id);
      const webhooks = await list.upsert(
        chat.project_id,
        this.store.view(),
        chat.version,
        usage,
        tasks.map((task) => task.id),
        states,
      );
      this.outbox.learn(webhooks, Date.now());
      this.usage.handedOff(usage);
      this.taskIndex.told(states);
      this.store.markListed(chat.version, tasks.at(-1)?.seq ?? chat.tasks_listed_seq);
      this.retryAt = 0;
      if (this.store.chat()!.version <= chat.version) this.behindSince = undefined;
    } catch (error) {
      log.warn("chat_list_update_failed", { chatId: chat.id }, error);
      this.retryAt = Date.now() + RETRY_MS;
    }
  }
}

/** A failed entry leaves the queue when its 24 hours end: followers hear it then, not at the next change. */
export const failedEntryExpiry = (submissions: SubmissionStorage, change: Change): DeferredJob => ({
  dueAt: () => submissions.nextFailedExpiry(),
  run: async (now) => change(now, nothing, "unlisted"),
});

/** A pending question expires QUESTION_TTL_HOURS after it was asked: a change of the chat (no longer awaiting), nothing for the agent. */
export const questionExpiry = (questions: QuestionStorage, change: Change): DeferredJob => ({
  dueAt: () => questions.expiryDue(),
  run: async (now) => {
    if ((questions.expiryDue() ?? Number.POSITIVE_INFINITY) <= now) change(now, () => questions.expire(now));
  },
});
