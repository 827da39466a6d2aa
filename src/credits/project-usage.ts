import { DAY_MS, iso } from "../time";

/** What one ended task cost, as its chat hands it to the project: counted once per task id however often it is handed over. */
export type TaskUsage = { taskId: string; endedAt: number; credits: number; inputTokens: number | null; outputTokens: number | null };
export type UsageDay = { date: string; tasks: number; credits: number; inputTokens: number; outputTokens: number };

/** The UTC day of a time, as usage and its queries name days: YYYY-MM-DD. */
export const dayOf = (ms: number) => iso(ms).slice(0, 10);

// Days are kept 400 days; a task id long enough to outlast any retried hand-off.
const DAYS_KEPT = 400;
const COUNTED_KEPT_MS = 30 * DAY_MS;
const PRUNE_EVERY_MS = DAY_MS;

/**
 * A project's daily usage in its ProjectChats object: one row per UTC day, so reading a year is at
 * most 366 rows and a task's end costs no D1 write. Each task is counted under its id once.
 */
export class ProjectUsage {
  private prunedAt = 0;

  constructor(private readonly sql: SqlStorage) {}

  static readonly schema = [
    "CREATE TABLE IF NOT EXISTS usage_days (day TEXT PRIMARY KEY, tasks INTEGER NOT NULL, credits INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS usage_counted (task_id TEXT PRIMARY KEY, at INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS usage_counted_by_age ON usage_counted (at)",
  ];

  /** Adds each task not counted yet to the day it ended on. */
  record(tasks: readonly TaskUsage[], now: number): void {
    for (const task of tasks) {
      const fresh = this.sql.exec("INSERT OR IGNORE INTO usage_counted (task_id, at) VALUES (?, ?) RETURNING 1", task.taskId, now).toArray().length > 0;
      if (!fresh) continue;
      this.sql.exec(
        `INSERT INTO usage_days (day, tasks, credits, input_tokens, output_tokens) VALUES (?, 1, ?, ?, ?)
         ON CONFLICT(day) DO UPDATE SET tasks = tasks + 1, credits = credits + excluded.credits,
           input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens`,
        dayOf(task.endedAt),
        task.credits,
        task.inputTokens ?? 0,
        task.outputTokens ?? 0,
      );
    }
    this.prune(now);
  }

  /** The days from `from` to `to` (YYYY-MM-DD, inclusive) with at least one task, oldest first. */
  days(from: string, to: string): UsageDay[] {
    return this.sql
      .exec<{ day: string; tasks: number; credits: number; input_tokens: number; output_tokens: number }>(
        "SELECT * FROM usage_days WHERE day >= ? AND day <= ? ORDER BY day",
        from,
        to,
      )
      .toArray()
      .map((r) => ({ date: r.day, tasks: r.tasks, credits: r.credits, inputTokens: r.input_tokens, outputTokens: r.output_tokens }));
  }

  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.sql.exec("DELETE FROM usage_days WHERE day < ?", dayOf(now - DAYS_KEPT * DAY_MS));
    this.sql.exec("DELETE FROM usage_counted WHERE at < ?", now - COUNTED_KEPT_MS);
  }
}
