import type { Turn } from "../../agent/conversation";

/** A user message or reply as the chat stored it: its role, its text and the task that took it or wrote it. */
export type StoredTurn = { role: string; content: string; task_id: string | null };

/**
 * The conversation a model sees, newest first, from the stored user messages and replies (newest
 * first); lazy, so a long chat is read only as far back as the caller goes.
 */
export function* turnsFrom(rows: Iterable<StoredTurn>): Generator<Turn> {
  // A steering text is stored when the task took it, after its reply had begun; the reply answered it, so in the
  // conversation it comes before the reply. Newest first: a task's user messages seen before its reply are held until it.
  const held = new Map<string, Turn[]>();
  const answered = new Set<string>();
  for (const row of rows) {
    if (row.role === "user" && row.task_id && !answered.has(row.task_id)) {
      held.set(row.task_id, [...(held.get(row.task_id) ?? []), { role: "user", content: row.content }]);
      continue;
    }
    yield { role: row.role === "user" ? "user" : "assistant", content: row.content };
    if (row.role === "owner" && row.task_id) {
      answered.add(row.task_id);
      yield* held.get(row.task_id) ?? [];
      held.delete(row.task_id);
    }
  }
  for (const turns of held.values()) yield* turns;
}
