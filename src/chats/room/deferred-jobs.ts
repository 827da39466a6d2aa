import type { Env } from "../../env";
import { log } from "../../log";
import { projectState } from "../../projects/access";
import type { RoomStorage } from "./room-storage";
import type { UsageOutbox } from "./usage-outbox";

/**
 * Work the chat owes outside the request that caused it. `dueAt` says when it is owed (undefined:
 * nothing is), read afresh after every change, so the alarm is derived from it; the alarm runs what is due.
 * `early`: the job may run before it is due when the alarm is here anyway and nothing else would wake the object sooner.
 */
export type DeferredJob = { dueAt(now: number): number | undefined; run(now: number): Promise<void>; early?: true };

// A job that threw waits this long before it runs again, twice as long after each failure in a row, at most JOB_BACKOFF_MAX_MS.
export const JOB_BACKOFF_MS = 5_000;
export const JOB_BACKOFF_MAX_MS = 5 * 60_000;

/**
 * A deferred job as the alarm runs it: what it throws is caught and logged, and the job is not due
 * again until a backoff has passed (5 s, then 10 s, 20 s, … at most 5 minutes; reset by a run that
 * succeeds), so one job that keeps failing neither holds up the others nor runs more than a dozen
 * times a minute. The backoff is in memory: a restart tries at once, then backs off again.
 */
export class BackedOffJob implements DeferredJob {
  private failures = 0;
  private retryAt = 0;

  constructor(
    readonly job: DeferredJob,
    private readonly name: string,
  ) {}

  get early(): true | undefined {
    return this.job.early;
  }

  dueAt(now: number): number | undefined {
    const due = this.job.dueAt(now);
    return due === undefined ? undefined : Math.max(due, this.retryAt);
  }

  /** Runs the job; what it throws backs it off, and is logged with the chat's id. */
  async run(now: number, chatId = ""): Promise<void> {
    try {
      await this.job.run(now);
      this.failures = 0;
      this.retryAt = 0;
    } catch (error) {
      this.failures++;
      this.retryAt = Date.now() + Math.min(JOB_BACKOFF_MAX_MS, JOB_BACKOFF_MS * 2 ** (this.failures - 1));
      // The runtime drops an alarm that keeps throwing, which would stall the chat: it is logged, and tried again later.
      log.error("chat_job_failed", { chatId, job: this.name, failures: this.failures }, error);
    }
  }
}

// A refund or a chat-list update that failed is tried again this much later.
const RETRY_MS = 5_000;
// The chat list may lag a busy chat by this much: a burst of sends, or a task's parts, reach it as one update.
export const LIST_SYNC_DELAY_MS = 500;

/** Gives failed tasks' credits back through the paying account's ledger (idempotent); on failure it is due again shortly. */
export class Refunds implements DeferredJob {
  private retryAt = 0;

  constructor(
    private readonly env: Env,
    private readonly store: RoomStorage,
  ) {}

  dueAt(): number | undefined {
    return this.store.pendingRefunds().length > 0 ? this.retryAt : undefined;
  }

  async run(): Promise<void> {
    for (const refund of this.store.pendingRefunds()) {
      try {
        // Only a task charged before ledgers existed has no account recorded: its payer was the project's owner.
        const accountId = refund.account_id ?? (await projectState(this.env.DB, this.store.chat()!.project_id)).value?.ownerAccountId;
        if (accountId) await this.env.ACCOUNT_LEDGER.getByName(accountId).refund(accountId, refund.task_id);
        this.store.refunded(refund.task_id);
      } catch (error) {
        log.warn("refund_failed", { chatId: this.store.chat()!.id }, error);
        this.retryAt = Date.now() + RETRY_MS;
        return;
      }
    }
  }
}

/** Sends the chat's summary to the project's chat list (newer versions win there); nothing is lost when it fails. */
export class ChatListSync implements DeferredJob {
  readonly early = true;
  // When the chat list first fell behind this object (in memory: after a restart it counts from the first look).
  private behindSince: number | undefined;
  private retryAt = 0;

  constructor(
    private readonly env: Env,
    private readonly store: RoomStorage,
    // Ended tasks' usage rides along, so the project's daily usage costs a task's end no call of its own.
    private readonly usage: UsageOutbox,
  ) {}

  dueAt(now: number): number | undefined {
    const chat = this.store.chat();
    if (!chat || (chat.indexed_version >= chat.version && !this.usage.hasWaiting())) return undefined;
    this.behindSince ??= now;
    return Math.max(this.behindSince + LIST_SYNC_DELAY_MS, this.retryAt);
  }

  async run(): Promise<void> {
    const chat = this.store.chat();
    const usage = this.usage.waiting();
    if (!chat || (chat.indexed_version >= chat.version && usage.length === 0)) return;
    try {
      await this.env.PROJECT_CHATS.getByName(chat.project_id).upsert(chat.project_id, this.store.view(), chat.version, usage);
      this.usage.handedOff(usage);
      this.store.markListed(chat.version);
      this.retryAt = 0;
      if (this.store.chat()!.version <= chat.version) this.behindSince = undefined;
    } catch (error) {
      log.warn("chat_list_update_failed", { chatId: chat.id }, error);
      this.retryAt = Date.now() + RETRY_MS;
    }
  }
}
