import { log } from "../../log";
import type { RoomStorage } from "./room-storage";

/**
 * Work the chat owes outside the request that caused it. `dueAt` says when it is owed (undefined:
 * nothing is), read afresh after every change, so the alarm is derived from it; the alarm runs what is due.
 * `earlyMs`: how long before it is due the job may run when the alarm is here anyway and nothing else would wake the
 * object sooner (a window, so a job that rides along with others still waits for most of its delay).
 */
export type DeferredJob = { dueAt(now: number): number | undefined; run(now: number): Promise<void>; earlyMs?: number };

// A job that threw waits this long before it runs again, twice as long after each failure in a row, at most JOB_BACKOFF_MAX_MS.
export const JOB_BACKOFF_MS = 5_000;
export const JOB_BACKOFF_MAX_MS = 5 * 60_000;

/**
 * A deferred job as the alarm runs it: what it throws is caught and logged, and the job is not due
 * again until a backoff has passed (5 s, then 10 s, 20 s, … at most 5 minutes; reset by a run that
 * succeeds), so one job that keeps failing neither holds up the others nor runs more than a dozen
 * times a minute. The backoff is in memory: a restart tries at once, then backs off again.
 */
class BackedOffJob implements DeferredJob {
  private failures = 0;
  private retryAt = 0;

  constructor(
    private readonly job: DeferredJob,
    private readonly name: string,
  ) {}

  get earlyMs(): number | undefined {
    return this.job.earlyMs;
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

/**
 * The chat object's one alarm, derived from the work it owes: each deferred job says when it is due,
 * `reschedule` sets the alarm for the earliest (or deletes it), and `runDue` is the alarm itself, running
 * each job whose time has come, in the order they were added. Nothing else sets the alarm.
 */
export class AlarmSchedule {
  private readonly jobs: BackedOffJob[] = [];
  // The alarm as this object last set it (undefined: not known, read nothing into it).
  private alarmAt: number | null | undefined;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly store: RoomStorage,
  ) {}

  /** Adds a job, after those added before it (the alarm runs them in this order); it backs off on its own when it throws. */
  add(name: string, job: DeferredJob): void {
    this.jobs.push(new BackedOffJob(job, name));
  }

  /** A chat exists here: an object woken for an unknown id owes nothing and sets no alarm. */
  private live(): boolean {
    return this.store.isInitialised() && this.store.chat() !== undefined;
  }

  /** Runs what is due, in order; a job within its early window does when the object would otherwise wake again only for it. */
  async runDue(): Promise<void> {
    if (!this.live()) return;
    // The alarm that woke this has been used up.
    this.alarmAt = undefined;
    const chatId = this.store.chat()!.id;
    for (const job of this.jobs) {
      const now = Date.now();
      const due = job.dueAt(now);
      if (due === undefined || (due > now && !this.mayGoEarly(job, due, now))) continue;
      await job.run(now, chatId);
    }
    this.reschedule(Date.now());
  }

  /** Within the job's early window and nothing else due sooner; the other jobs are asked only then, not for every job at every alarm. */
  private mayGoEarly(job: BackedOffJob, due: number, now: number): boolean {
    if (job.earlyMs === undefined || due - now > job.earlyMs) return false;
    return this.jobs.every((other) => other === job || (other.dueAt(now) ?? Number.POSITIVE_INFINITY) > due);
  }

  /**
   * Sets the alarm for the earliest time anything is due, or none. Alarms keep whole milliseconds: one
   * due at 12.5 is set for 13, since 12, the moment an alarm may just have run at, would count as already
   * run. One that is due already stays as it is set.
   */
  reschedule(now: number): void {
    if (!this.live()) return;
    const due = Math.min(...this.jobs.map((job) => job.dueAt(now) ?? Number.POSITIVE_INFINITY));
    const at = Number.isFinite(due) ? Math.ceil(Math.max(due, now)) : null;
    if (at === this.alarmAt || (at !== null && at <= now && this.alarmAt != null && this.alarmAt <= now)) return;
    this.alarmAt = at;
    this.ctx.waitUntil(at === null ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(at));
  }
}
