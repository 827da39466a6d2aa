/**
 * Takes a task's credits from the project owner's balance, at most once per task id (a retry after
 * a restart finds the charge already made). False when the balance does not cover it.
 */
export async function chargeTask(d1: D1Database, projectId: string, taskId: string, amount: number): Promise<boolean> {
  const [, charged] = await d1.batch([
    d1
      .prepare(
        `INSERT OR IGNORE INTO credit_charges (task_id, account_id, amount, charged_at)
         SELECT ?1, a.id, ?2, ?3 FROM projects p JOIN accounts a ON a.id = p.owner_account_id WHERE p.id = ?4 AND a.credits >= ?2`,
      )
      .bind(taskId, amount, new Date().toISOString(), projectId),
    d1.prepare("SELECT 1 AS charged FROM credit_charges WHERE task_id = ?").bind(taskId),
  ]);
  return (charged?.results.length ?? 0) > 0;
}

/** Gives a failed task's credits back; a no-op when there is no charge (or it was refunded already). */
export async function refundTask(d1: D1Database, taskId: string): Promise<void> {
  await d1.prepare("DELETE FROM credit_charges WHERE task_id = ?").bind(taskId).run();
}
