import type { ChainState } from "../chain-schemas";
import type { IndexedTask } from "../room-calls";
import type { Chains } from "./chains";
import type { SubmissionStorage } from "./submission-storage";

const ENDED: ReadonlySet<ChainState> = new Set(["completed", "failed", "refused", "cancelled"]);

/**
 * What the project's task index (in its chat list) must hear of this chat's tasks: each new task, then each state it
 * enters until it ends. The chat keeps the tasks that have not ended with what the index was last told of them (a row
 * each, gone when the end is told), so a sync reads only those, and the index writes a row per task, not per event.
 */
export class TaskIndexFeed {
  constructor(
    private readonly sql: SqlStorage,
    private readonly submissions: SubmissionStorage,
    private readonly chains: Chains,
  ) {}

  /** New roots join the tasks the index follows (a steering text is a task only once it runs as its own). */
  follow(roots: readonly { id: string }[]): void {
    for (const { id } of roots) this.sql.exec("INSERT OR IGNORE INTO indexed_tasks (task_id, told) VALUES (?, NULL)", id);
  }

  /** The followed tasks whose state differs from what the index was told (at most `limit`); roots that are no task are let go. */
  changes(limit: number): IndexedTask[] {
    const changed: IndexedTask[] = [];
    for (const { task_id: taskId, told } of this.sql.exec<{ task_id: string; told: string | null }>("SELECT task_id, told FROM indexed_tasks").toArray()) {
      const root = this.submissions.byId(taskId);
      const before = told === null ? undefined : (JSON.parse(told) as IndexedTask);
      // A task told queued stays so while its submission waits: the long queue of a busy chat costs a read each, no more.
      if (before?.state === "queued" && root?.status === "queued") continue;
      const task = root && this.chains.task(root, "", false);
      if (!task?.isTask) {
        // A steering text still waiting may yet run as its own task; anything else that leads no task never will.
        if (root?.kind !== "steer" || root.status !== "steering") this.sql.exec("DELETE FROM indexed_tasks WHERE task_id = ?", taskId);
        continue;
      }
      const { state, question } = task.chain;
      const entry: IndexedTask = { taskId, state, asks: state === "awaiting" ? (question?.kind ?? null) : null, at: task.enteredAt };
      if (told !== JSON.stringify(entry)) changed.push(entry);
      if (changed.length >= limit) break;
    }
    return changed;
  }

  /** The index took these: an ended task is followed no more, any other remembers what was told. */
  told(entries: readonly IndexedTask[]): void {
    for (const entry of entries) {
      if (ENDED.has(entry.state)) this.sql.exec("DELETE FROM indexed_tasks WHERE task_id = ?", entry.taskId);
      else this.sql.exec("UPDATE indexed_tasks SET told = ? WHERE task_id = ?", JSON.stringify(entry), entry.taskId);
    }
  }
}
