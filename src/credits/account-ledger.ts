import { hasTable } from "../db/object-schema";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { readBalanceToMove } from "./moved-balances";

export type ChargeOutcome = "charged" | "insufficient";
export type MoveOutcome = "moved" | "already_moved" | "no_account";

// A retried charge must find the first one: tasks are charged once, within minutes of their start.
const CHARGES_KEPT_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 86_400_000;

/**
 * One object per account (named by its id): the account's credit balance and the charges of its
 * tasks. A task is charged at most once (by task id), never below zero, and refunded at most once;
 * each is one synchronous stretch, so chats charging the same account at once cannot overdraw it.
 * A new account's balance is set when it is created; an account from before the balances moved
 * here brings its D1 balance (and its recent charges) the first time its ledger is used.
 */
export class AccountLedger extends DurableObject<Env> {
  private started = false;
  private starting: Promise<boolean> | undefined;
  private prunedAt = 0;

  /** A new account's opening balance; a ledger already started keeps its own. */
  async open(accountId: string, credits: number): Promise<void> {
    this.createSchema();
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO ledger (id, account_id, credits) VALUES (1, ?, ?)", accountId, credits);
    this.started = true;
  }

  /** Takes a task's credits, once: a retry for a task already charged answers "charged" again. */
  async charge(accountId: string, taskId: string, amount: number): Promise<ChargeOutcome> {
    if (!(await this.start(accountId))) return "insufficient";
    const sql = this.ctx.storage.sql;
    if (sql.exec("SELECT 1 FROM charges WHERE task_id = ?", taskId).toArray().length > 0) return "charged";
    // Takes the credits only when there are enough: one statement reads and writes the balance.
    if (sql.exec("UPDATE ledger SET credits = credits - ? WHERE credits >= ? RETURNING credits", amount, amount).toArray().length === 0) return "insufficient";
    const now = Date.now();
    sql.exec("INSERT INTO charges (task_id, amount, charged_at) VALUES (?, ?, ?)", taskId, amount, now);
    this.pruneOldCharges(now);
    return "charged";
  }

  /** Gives a failed task's credits back, once; a task never charged gives nothing. */
  async refund(accountId: string, taskId: string): Promise<void> {
    if (!(await this.start(accountId))) return;
    const sql = this.ctx.storage.sql;
    const [charge] = sql.exec<{ amount: number }>("SELECT amount FROM charges WHERE task_id = ? AND refunded_at IS NULL", taskId).toArray();
    if (!charge) return;
    sql.exec("UPDATE ledger SET credits = credits + ?", charge.amount);
    sql.exec("UPDATE charges SET refunded_at = ? WHERE task_id = ?", Date.now(), taskId);
  }

  /** The balance; null for an account that does not exist. */
  async balance(accountId: string): Promise<number | null> {
    return (await this.start(accountId)) ? this.credits() : null;
  }

  /** Sets the balance (an operator's `credits set`); null for an account that does not exist. */
  async setBalance(accountId: string, credits: number): Promise<number | null> {
    if (!(await this.start(accountId))) return null;
    this.ctx.storage.sql.exec("UPDATE ledger SET credits = ?", credits);
    return credits;
  }

  /** The one-time move: brings the account's D1 balance here unless the ledger has started already. */
  async moveFromD1(accountId: string): Promise<MoveOutcome> {
    if (this.hasStorage()) return "already_moved";
    return (await this.start(accountId)) ? "moved" : "no_account";
  }

  /** True once the ledger holds the account's balance; the first call for an older account moves it from D1. */
  private start(accountId: string): Promise<boolean> | boolean {
    this.started ||= this.hasStorage();
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
    this.started = true;
    return true;
  }

  private credits(): number {
    return this.ctx.storage.sql.exec<{ credits: number }>("SELECT credits FROM ledger").one().credits;
  }

  private pruneOldCharges(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.ctx.storage.sql.exec("DELETE FROM charges WHERE charged_at < ?", now - CHARGES_KEPT_MS);
  }

  /** Reads only, so asking about an unknown account stores nothing. */
  private hasStorage(): boolean {
    return hasTable(this.ctx.storage.sql, "ledger");
  }

  private createSchema(): void {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, credits INTEGER NOT NULL CHECK (credits >= 0))");
    sql.exec("CREATE TABLE IF NOT EXISTS charges (task_id TEXT PRIMARY KEY, amount INTEGER NOT NULL, charged_at INTEGER NOT NULL, refunded_at INTEGER)");
    sql.exec("CREATE INDEX IF NOT EXISTS charges_by_time ON charges (charged_at)");
  }
}
