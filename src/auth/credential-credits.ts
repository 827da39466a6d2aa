import { DAY_MS } from "../time";

/** A credential's ceiling and spend: `creditsUsed` is what its tasks were charged net of refunds; `committed` adds the charges under way. */
export type CreditStanding = { creditLimit: number | null; creditsUsed: number; committed: number };
export type ReserveOutcome = "reserved" | "over_limit";

// A retried reservation must find the first one: tasks are charged within minutes of their dispatch.
const HOLDS_KEPT_MS = 30 * DAY_MS;
const PRUNE_EVERY_MS = DAY_MS;

/** The tables, as one step of the TokenGate's schema. */
export const CREDIT_TABLES = [
  "CREATE TABLE credit (id INTEGER PRIMARY KEY CHECK (id = 1), credit_limit INTEGER, used INTEGER NOT NULL DEFAULT 0, held INTEGER NOT NULL DEFAULT 0)",
  // One row per task charged (or being charged) for this credential: held, then charged or released; a charged one may be refunded.
  "CREATE TABLE credit_holds (task_id TEXT PRIMARY KEY, amount INTEGER NOT NULL, state TEXT NOT NULL, at INTEGER NOT NULL)",
  "CREATE INDEX credit_holds_by_time ON credit_holds (at)",
];

type HoldState = "held" | "charged" | "released" | "refunded";

/**
 * What one credential (a personal token or an OAuth grant) may spend, kept in its TokenGate. The owner's
 * ledger takes the credits, in another object; the two agree because a task's credits are reserved here
 * first (refused past the limit), then charged there, then confirmed or released here, each step keyed by
 * the task's id and idempotent: the chat object repeats the steps after any crash until the last is done,
 * and a refund goes back to both. Each step is one synchronous stretch, so parallel dispatches are exact.
 */
export class CredentialCredits {
  private standingKept: CreditStanding | undefined;
  private prunedAt = 0;

  constructor(private readonly sql: SqlStorage) {}

  standing(): CreditStanding {
    if (this.standingKept) return this.standingKept;
    const [row] = this.sql.exec<{ credit_limit: number | null; used: number; held: number }>("SELECT credit_limit, used, held FROM credit").toArray();
    this.standingKept = { creditLimit: row?.credit_limit ?? null, creditsUsed: row?.used ?? 0, committed: (row?.used ?? 0) + (row?.held ?? 0) };
    return this.standingKept;
  }

  /** Sets the ceiling (null: none); it holds for every reservation after this returns. */
  setLimit(limit: number | null): CreditStanding {
    this.sql.exec("INSERT INTO credit (id, credit_limit) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET credit_limit = excluded.credit_limit", limit);
    this.standingKept = undefined;
    return this.standing();
  }

  /** Holds a task's credits unless that would pass the limit; a task already held (a retried dispatch) is held still. */
  reserve(taskId: string, amount: number, now: number): ReserveOutcome {
    const hold = this.hold(taskId);
    if (hold && hold.state !== "released") return "reserved";
    const { creditLimit, committed } = this.standing();
    if (creditLimit !== null && committed + amount > creditLimit) return "over_limit";
    this.sql.exec(
      "INSERT INTO credit_holds (task_id, amount, state, at) VALUES (?, ?, 'held', ?) ON CONFLICT(task_id) DO UPDATE SET amount = excluded.amount, state = 'held', at = excluded.at",
      taskId,
      amount,
      now,
    );
    this.adjust(0, amount);
    this.prune(now);
    return "reserved";
  }

  /** The owner's ledger answered: the held credits count as used (charged) or are let go (not charged). */
  settle(taskId: string, charged: boolean): void {
    const hold = this.hold(taskId);
    if (hold?.state !== "held") return;
    this.sql.exec("UPDATE credit_holds SET state = ? WHERE task_id = ?", charged ? "charged" : "released", taskId);
    this.adjust(charged ? hold.amount : 0, -hold.amount);
  }

  /** A charged task failed and its credits went back to the owner: they no longer count here either. */
  refund(taskId: string): void {
    const hold = this.hold(taskId);
    if (hold?.state !== "charged") return;
    this.sql.exec("UPDATE credit_holds SET state = 'refunded' WHERE task_id = ?", taskId);
    this.adjust(-hold.amount, 0);
  }

  private hold(taskId: string): { amount: number; state: HoldState } | undefined {
    return this.sql.exec<{ amount: number; state: HoldState }>("SELECT amount, state FROM credit_holds WHERE task_id = ?", taskId).toArray()[0];
  }

  private adjust(used: number, held: number): void {
    this.sql.exec("INSERT INTO credit (id, used, held) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET used = used + excluded.used, held = held + excluded.held", used, held);
    this.standingKept = undefined;
  }

  /** Settled holds older than any retry are dropped; a hold still held is kept whatever its age. */
  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.sql.exec("DELETE FROM credit_holds WHERE at < ? AND state != 'held'", now - HOLDS_KEPT_MS);
  }
}
