import { hasTable, migrateSchema } from "../db/object-schema";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { DAY_MS } from "../time";
import { readBalanceToMove } from "./moved-balances";
import { Statement, type StatementPage, type TaskRef } from "./statement";

export type ChargeOutcome = "charged" | "insufficient";
export type MoveOutcome = "moved" | "already_moved" | "no_account";

// A retried charge must find the first one: tasks are charged once, within minutes of their start.
const CHARGES_KEPT_MS = 30 * DAY_MS;
const PRUNE_EVERY_MS = DAY_MS;

// Append-only: migrations[i] takes the ledger's storage from version i to i + 1.
const MIGRATIONS = [
  // The first tables, from before schema versions (IF NOT EXISTS: older ledgers have them already).
  [
    "CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, credits INTEGER NOT NULL CHECK (credits >= 0))",
    "CREATE TABLE IF NOT EXISTS charges (task_id TEXT PRIMARY KEY, amount INTEGER NOT NULL, charged_at INTEGER NOT NULL, refunded_at INTEGER)",
    "CREATE INDEX IF NOT EXISTS charges_by_time ON charges (charged_at)",
  ],
  // The statement; a charge remembers its task so its refund names it too.
  ["ALTER TABLE charges ADD COLUMN project_id TEXT", "ALTER TABLE charges ADD COLUMN chat_id TEXT", "ALTER TABLE charges ADD COLUMN submission_id TEXT", ...Statement.schema],
] as const;

/**
 * One object per account (named by its id): the account's credit balance, the charges of its
 * tasks and its statement. A task is charged at most once (by task id), never below zero, and
 * refunded at most once; each is one synchronous stretch that also writes its statement entry, so
 * chats charging the same account at once can neither overdraw it nor miss or double an entry.
 * A new account's balance is set when it is created; an account from before the balances moved
 * here brings its D1 balance (and its recent charges) the first time its ledger is used.
 */
export class AccountLedger extends DurableObject<Env> {
  private started = false;
  private starting: Promise<boolean> | undefined;
  private prunedAt = 0;
  private readonly statement = new Statement(this.ctx.storage.sql);

  /** A new account's opening balance; a ledger already started keeps its own. */
  async open(accountId: string, credits: number): Promise<void> {
    this.createSchema();
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO ledger (id, account_id, credits) VALUES (1, ?, ?)", accountId, credits);
    this.statement.recordOpening(this.credits(), Date.now());
    this.started = true;
  }

  /** Takes a task's credits, once: a retry for a task already charged answers "charged" again. `ref` names the task in the statement. */
  async charge(accountId: string, taskId: string, amount: number, ref: TaskRef | null = null): Promise<ChargeOutcome> {
    if (!(await this.start(accountId))) return "insufficient";
    const sql = this.ctx.storage.sql;
    if (sql.exec("SELECT 1 FROM charges WHERE task_id = ?", taskId).toArray().length > 0) return "charged";
    // Takes the credits only when there are enough: one statement reads and writes the balance.
    const [left] = sql.exec<{ credits: number }>("UPDATE ledger SET credits = credits - ? WHERE credits >= ? RETURNING credits", amount, amount).toArray();
    if (!left) return "insufficient";
    const now = Date.now();
    sql.exec(
      "INSERT INTO charges (task_id, amount, charged_at, project_id, chat_id, submission_id) VALUES (?, ?, ?, ?, ?, ?)",
      taskId,
      amount,
      now,
      ref?.projectId ?? null,
      ref?.chatId ?? null,
      ref?.submissionId ?? null,
    );
    this.statement.record("charge", -amount, left.credits, ref, now);
    this.prune(now);
    return "charged";
  }

  /** Gives a failed task's credits back, once; a task never charged gives nothing. */
  async refund(accountId: string, taskId: string): Promise<void> {
    if (!(await this.start(accountId))) return;
    const sql = this.ctx.storage.sql;
    const [charge] = sql
      .exec<{ amount: number; project_id: string | null; chat_id: string | null; submission_id: string | null }>(
        "SELECT amount, project_id, chat_id, submission_id FROM charges WHERE task_id = ? AND refunded_at IS NULL",
        taskId,
      )
      .toArray();
    if (!charge) return;
    const now = Date.now();
    const { credits } = sql.exec<{ credits: number }>("UPDATE ledger SET credits = credits + ? RETURNING credits", charge.amount).one();
    sql.exec("UPDATE charges SET refunded_at = ? WHERE task_id = ?", now, taskId);
    const ref = charge.project_id && charge.chat_id && charge.submission_id ? { projectId: charge.project_id, chatId: charge.chat_id, submissionId: charge.submission_id } : null;
    this.statement.record("refund", charge.amount, credits, ref, now);
  }

  /** The balance and a page of the statement, newest first, from `before` (a seq) down; null for an account that does not exist. */
  async statementPage(accountId: string, limit: number, before?: number): Promise<StatementPage | null> {
    if (!(await this.start(accountId))) return null;
    return this.statement.page(this.credits(), limit, before);
  }

  /** The balance; null for an account that does not exist. */
  async balance(accountId: string): Promise<number | null> {
    return (await this.start(accountId)) ? this.credits() : null;
  }

  /** Sets the balance (an operator's `credits set`); null for an account that does not exist. */
  async setBalance(accountId: string, credits: number): Promise<number | null> {
    if (!(await this.start(accountId))) return null;
    const before = this.credits();
    this.ctx.storage.sql.exec("UPDATE ledger SET credits = ?", credits);
    // The statement shows the signed difference; setting the balance it had changes nothing.
    if (credits !== before) this.statement.record("adjustment", credits - before, credits, null, Date.now());
    return credits;
  }

  /** The one-time move: brings the account's D1 balance here unless the ledger has started already. */
  async moveFromD1(accountId: string): Promise<MoveOutcome> {
    if (this.hasStorage()) return "already_moved";
    return (await this.start(accountId)) ? "moved" : "no_account";
  }

  /** True once the ledger holds the account's balance; the first call for an older account moves it from D1. */
  private start(accountId: string): Promise<boolean> | boolean {
    if (!this.started && this.hasStorage()) {
      // A ledger from an earlier release gets the statement's schema and its opening entry the first time it wakes.
      this.createSchema();
      this.statement.recordOpening(this.credits(), Date.now());
      this.started = true;
    }
    if (this.started) return true;
    this.starting ??= this.startFromD1(accountId).finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async startFromD1(accountId: string): Promise<boolean> {
    const moved = await readBalanceToMove(this.env.DB, accountId, Date.now() - CHARGES_KEPT_MS);
    // Nothing is stored for an account that does not exist; open() may have run during the read.
    if (!moved || this.hasStorage()) {
      this.started = this.hasStorage();
      return this.started;
    }
    this.createSchema();
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO ledger (id, account_id, credits) VALUES (1, ?, ?)", accountId, moved.credits);
    for (const c of moved.charges) sql.exec("INSERT OR IGNORE INTO charges (task_id, amount, charged_at) VALUES (?, ?, ?)", c.taskId, c.amount, c.chargedAt);
    this.statement.recordOpening(moved.credits, Date.now());
    this.started = true;
    return true;
  }

  private credits(): number {
    return this.ctx.storage.sql.exec<{ credits: number }>("SELECT credits FROM ledger").one().credits;
  }

  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.ctx.storage.sql.exec("DELETE FROM charges WHERE charged_at < ?", now - CHARGES_KEPT_MS);
    this.statement.prune(now);
  }

  /** Reads only, so asking about an unknown account stores nothing. */
  private hasStorage(): boolean {
    return hasTable(this.ctx.storage.sql, "ledger");
  }

  private createSchema(): void {
    migrateSchema(this.ctx.storage.sql, MIGRATIONS);
  }
}
