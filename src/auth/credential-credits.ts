import { DAY_MS } from "../time";

/** A credential's ceiling and spend: what its tasks were charged net of refunds (a charge under way counts from its reservation). */
export type CreditStanding = { creditLimit: number | null; creditsUsed: number };
export type ReserveOutcome = "reserved" | "over_limit";

// A retried reservation must find the first one: tasks are charged within minutes of their dispatch.
const HOLDS_KEPT_MS = 30 * DAY_MS;
const PRUNE_EVERY_MS = DAY_MS;

/** The tables, as one step of the TokenGate's schema. */
export const CREDIT_TABLES = [
  "CREATE TABLE credit (id INTEGER PRIMARY KEY CHECK (id = 1), credit_limit INTEGER, used INTEGER NOT NULL DEFAULT 0)",
  // One row per task charged for this credential: counted when reserved; released when the owner's ledger refused it, refunded when it failed.
  "CREATE TABLE credit_holds (task_id TEXT PRIMARY KEY, amount INTEGER NOT NULL, state TEXT NOT NULL, at INTEGER NOT NULL)",
  "CREATE INDEX credit_holds_by_time ON credit_holds (at)",
];

type HoldState = "counted" | "released" | "refunded";

/**
 * What one credential (a personal token or an OAuth grant) may spend, kept in its TokenGate. The owner's
 * ledger takes the credits, in another object; the two agree because a task's credits are counted here first
 * (refused past the limit), then charged there, and let go here when the ledger refused them; a refund goes
 * back to both. Each step is keyed by the task's id and idempotent, and the chat object repeats them after
 * any crash until its dispatch is done. Each is one synchronous stretch, so parallel dispatches are exact.
 */
export class CredentialCredits {
  private standingKept: CreditStanding | undefined;
  private prunedAt = 0;

  constructor(private readonly sql: SqlStorage) {}

  standing(): CreditStanding {
    if (this.standingKept) return this.standingKept;
    const [row] = this.sql.exec<{ credit_limit: number | null; used: number }>("SELECT credit_limit, used FROM credit").toArray();
    this.standingKept = { creditLimit: row?.credit_limit ?? null, creditsUsed: row?.used ?? 0 };
    return this.standingKept;
  }

  /** Sets the ceiling (null: none); it holds for every reservation after this returns. */
  setLimit(limit: number | null): CreditStanding {
    this.sql.exec("INSERT INTO credit (id, credit_limit) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET credit_limit = excluded.credit_limit", limit);
    this.standingKept = undefined;
    return this.standing();
  }

  /** Counts a task's credits unless that would pass the limit; a task already counted (a retried dispatch) stays counted once. */
  reserve(taskId: string, amount: number, now: number): ReserveOutcome {
    const hold = this.hold(taskId);
    if (hold && hold.state !== "released") return "reserved";
    const { creditLimit, creditsUsed } = this.standing();
    if (creditLimit !== null && creditsUsed + amount > creditLimit) return "over_limit";
    this.sql.exec(
      "INSERT INTO credit_holds (task_id, amount, state, at) VALUES (?, ?, 'counted', ?) ON CONFLICT(task_id) DO UPDATE SET amount = excluded.amount, state = 'counted', at = excluded.at",
      taskId,
      amount,
      now,
    );
    this.adjust(amount);
    this.prune(now);
    return "reserved";
  }

  /** The owner's ledger refused the task's charge (too few credits): its credits no longer count. */
  release(taskId: string): void {
    this.uncount(taskId, "released");
  }

  /** A charged task failed and its credits went back to the owner: they no longer count here either. */
  refund(taskId: string): void {
    this.uncount(taskId, "refunded");
  }

  private uncount(taskId: string, state: Exclude<HoldState, "counted">): void {
    const hold = this.hold(taskId);
    if (hold?.state !== "counted") return;
    this.sql.exec("UPDATE credit_holds SET state = ? WHERE task_id = ?", state, taskId);
    this.adjust(-hold.amount);
  }

  private hold(taskId: string): { amount: number; state: HoldState } | undefined {
    return this.sql.exec<{ amount: number; state: HoldState }>("SELECT amount, state FROM credit_holds WHERE task_id = ?", taskId).toArray()[0];
  }

  private adjust(used: number): void {
    this.sql.exec("INSERT INTO credit (id, used) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET used = used + excluded.used", used);
    this.standingKept = undefined;
  }

  /** Holds older than any retry are dropped (the count they made stays in `used`). */
  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.sql.exec("DELETE FROM credit_holds WHERE at < ?", now - HOLDS_KEPT_MS);
  }
}
