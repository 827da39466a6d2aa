import type { ChainState } from "../chain-schemas";
import type { IndexedTask } from "../room-calls";

/** Where a page starts: after this task in the order (status time newest first, then id). */
export type TaskKey = { at: number; taskId: string };
/** Which tasks a page lists: a state (an awaiting one by whether its question asks for a connection), a time they entered it by, and where the page starts. */
export type TaskQuery = { state?: ChainState; connection?: boolean; after?: number; from?: TaskKey; limit: number };
export type TaskPage = { tasks: { taskId: string; chatId: string }[]; total: number; next: TaskKey | null };

/**
 * The index of a project's tasks in its ProjectChats object: a row per task (its chat, its state and since when), fed
 * by the hand-off that keeps the chat list current, so listing the project's tasks reads one object and lags a change
 * by that hand-off's delay at most. A state told late never replaces a newer one.
 */
export class ProjectTasks {
  constructor(private readonly sql: SqlStorage) {}

  static readonly schema = [
    "CREATE TABLE IF NOT EXISTS task_index (task_id TEXT PRIMARY KEY, chat_id TEXT NOT NULL, state TEXT NOT NULL, asks TEXT, status_at INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS task_index_by_time ON task_index (status_at DESC, task_id)",
  ];

  record(chatId: string, tasks: readonly IndexedTask[]): void {
    for (const task of tasks) {
      this.sql.exec(
        `INSERT INTO task_index (task_id, chat_id, state, asks, status_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, asks = excluded.asks, status_at = excluded.status_at
         WHERE excluded.status_at >= task_index.status_at`,
        task.taskId,
        chatId,
        task.state,
        task.asks,
        task.at,
      );
    }
  }

  /** A page of the project's tasks, newest status first, with how many match in all and where the next page starts. */
  page(query: TaskQuery): TaskPage {
    const where: string[] = [];
    const bindings: unknown[] = [];
    if (query.state) {
      where.push("state = ?");
      bindings.push(query.state);
    }
    if (query.connection !== undefined) where.push(query.connection ? "asks = 'connection'" : "(asks IS NULL OR asks != 'connection')");
    if (query.after !== undefined) {
      where.push("status_at >= ?");
      bindings.push(query.after);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM task_index ${filter}`, ...bindings).one().n;
    const from = query.from ? `${filter ? `${filter} AND` : "WHERE"} (status_at < ? OR (status_at = ? AND task_id > ?))` : filter;
    const rows = this.sql
      .exec<{ task_id: string; chat_id: string; status_at: number }>(
        `SELECT task_id, chat_id, status_at FROM task_index ${from} ORDER BY status_at DESC, task_id LIMIT ?`,
        ...bindings,
        ...(query.from ? [query.from.at, query.from.at, query.from.taskId] : []),
        query.limit + 1,
      )
      .toArray();
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      tasks: page.map((row) => ({ taskId: row.task_id, chatId: row.chat_id })),
      total,
      next: rows.length > query.limit && last ? { at: last.status_at, taskId: last.task_id } : null,
    };
  }
}
