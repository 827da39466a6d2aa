import { DAY_MS, iso } from "../time";

/** What moved an account's balance: a task's charge, its refund, or an operator's change (and the opening balance). */
export type StatementKind = "charge" | "refund" | "adjustment";
/** The task a charge or refund belongs to. */
export type TaskRef = { projectId: string; chatId: string; submissionId: string };
export type StatementItem = {
  id: string;
  kind: StatementKind;
  credits: number;
  balanceAfter: number;
  projectId: string | null;
  chatId: string | null;
  submissionId: string | null;
  createdAt: string;
};
/** One page, newest first; `before` is where the next page starts (the seq of its last item). */
export type StatementPage = { balance: number; items: StatementItem[]; before: number | null };

// Kept at least this long; the newest entry is kept whatever its age.
const STATEMENT_KEPT_MS = 90 * DAY_MS;

type Row = {
  seq: number;
  id: string;
  kind: StatementKind;
  credits: number;
  balance_after: number;
  project_id: string | null;
  chat_id: string | null;
  submission_id: string | null;
  created_at: number;
};

/** The account's statement in its AccountLedger's storage: every entry written in the same synchronous stretch as the balance change it records. */
export class Statement {
  constructor(private readonly sql: SqlStorage) {}

  static readonly schema = [
    "CREATE TABLE statement (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, kind TEXT NOT NULL, credits INTEGER NOT NULL, balance_after INTEGER NOT NULL, project_id TEXT, chat_id TEXT, submission_id TEXT, created_at INTEGER NOT NULL)",
    "CREATE INDEX statement_by_time ON statement (created_at)",
  ];

  record(kind: StatementKind, credits: number, balanceAfter: number, ref: TaskRef | null, now: number): void {
    this.sql.exec(
      "INSERT INTO statement (id, kind, credits, balance_after, project_id, chat_id, submission_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      crypto.randomUUID(),
      kind,
      credits,
      balanceAfter,
      ref?.projectId ?? null,
      ref?.chatId ?? null,
      ref?.submissionId ?? null,
      now,
    );
  }

  /** A statement begins with the balance it started from, as an adjustment: a new account's opening balance, or an older account's balance when its statement began. */
  recordOpening(balance: number, now: number): void {
    if (this.sql.exec("SELECT 1 FROM statement LIMIT 1").toArray().length === 0) this.record("adjustment", balance, balance, null, now);
  }

  page(balance: number, limit: number, before: number | undefined): StatementPage {
    const rows = this.sql.exec<Row>("SELECT * FROM statement WHERE seq < ? ORDER BY seq DESC LIMIT ?", before ?? Number.MAX_SAFE_INTEGER, limit + 1).toArray();
    const items = rows.slice(0, limit).map(toItem);
    return { balance, items, before: rows.length > limit ? rows[limit - 1]!.seq : null };
  }

  /** Drops entries past the kept time, never the newest (its balanceAfter is the balance). */
  prune(now: number): void {
    this.sql.exec("DELETE FROM statement WHERE created_at < ? AND seq < (SELECT MAX(seq) FROM statement)", now - STATEMENT_KEPT_MS);
  }
}

const toItem = (r: Row): StatementItem => ({
  id: r.id,
  kind: r.kind,
  credits: r.credits,
  balanceAfter: r.balance_after,
  projectId: r.project_id,
  chatId: r.chat_id,
  submissionId: r.submission_id,
  createdAt: iso(r.created_at),
});
