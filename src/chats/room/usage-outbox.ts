import type { TaskUsage } from "../../credits/project-usage";

type Row = { task_id: string; ended_at: number; credits: number; input_tokens: number | null; output_tokens: number | null };
// One chat-list sync carries at most this many tasks; more go with the next.
const HAND_OFF_MAX = 100;

/**
 * What the chat's ended tasks cost, written with each task's end and kept until the project's
 * ProjectChats object has counted it: it travels with the chat-list sync the end causes anyway,
 * and the project counts each task id once, so a sync retried after a lost answer is harmless.
 */
export class UsageOutbox {
  private maybeWaiting = true;

  constructor(private readonly sql: SqlStorage) {}

  record(usage: TaskUsage): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO usage_outbox (task_id, ended_at, credits, input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?)",
      usage.taskId,
      usage.endedAt,
      usage.credits,
      usage.inputTokens,
      usage.outputTokens,
    );
    this.maybeWaiting = true;
  }

  hasWaiting(): boolean {
    this.maybeWaiting &&= this.sql.exec("SELECT 1 FROM usage_outbox LIMIT 1").toArray().length > 0;
    return this.maybeWaiting;
  }

  /** The oldest ended tasks the project has not counted yet. */
  waiting(): TaskUsage[] {
    if (!this.maybeWaiting) return [];
    const rows = this.sql.exec<Row>("SELECT * FROM usage_outbox ORDER BY ended_at LIMIT ?", HAND_OFF_MAX).toArray();
    this.maybeWaiting = rows.length > 0;
    return rows.map((r) => ({ taskId: r.task_id, endedAt: r.ended_at, credits: r.credits, inputTokens: r.input_tokens, outputTokens: r.output_tokens }));
  }

  handedOff(usage: readonly TaskUsage[]): void {
    for (const { taskId } of usage) this.sql.exec("DELETE FROM usage_outbox WHERE task_id = ?", taskId);
  }
}
