import type { Turn } from "../agent/conversation";
import { hasTable, migrateSchema } from "../db/object-schema";
import { firstCharacters } from "../text";
import { PREVIEW_MAX, type Chat, type Message } from "./schemas";
import { FAILED_KEPT_BYTES, FAILED_KEPT_ENTRIES, FAILED_KEPT_MS, SubmissionStorage, type SubmissionRow } from "./submission-storage";

export type { SubmissionKind, SubmissionRow } from "./submission-storage";

export type ChatRow = {
  id: string;
  project_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  version: number;
  indexed_version: number;
  awaiting_user: number;
};
export type TaskRow = { id: string; submission_id: string; owner_message_id: string; started_at: number; check_at: number; partials: number };
type MessageRow = {
  seq: number;
  id: string;
  role: Message["role"];
  content: string;
  created_at: string;
  status: Message["status"];
  task_id: string | null;
  submission_id: string | null;
};

// Append-only: each entry upgrades the schema by one version, once, when the object wakes.
const SQL_NOW = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
// The failed entries of the last day beyond the newest FAILED_KEPT_ENTRIES holding FAILED_KEPT_BYTES (as keepFailedWithinBound keeps them).
const FAILED_BEYOND_BOUND = `SELECT seq FROM (
    SELECT seq, ROW_NUMBER() OVER newest AS entries, SUM(content_bytes) OVER newest AS bytes FROM submissions
    WHERE status = 'failed' AND left_queue_at IS NULL AND failed_at > ${SQL_NOW} - ${FAILED_KEPT_MS}
    WINDOW newest AS (ORDER BY failed_at DESC, seq DESC))
  WHERE entries > ${FAILED_KEPT_ENTRIES} OR bytes > ${FAILED_KEPT_BYTES}`;

export const MIGRATIONS: string[][] = [
  [
    `CREATE TABLE chat (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       archived_at TEXT, version INTEGER NOT NULL, indexed_version INTEGER NOT NULL DEFAULT 0, callback_origin TEXT)`,
    `CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, content TEXT NOT NULL,
       created_at TEXT NOT NULL, status TEXT, task_id TEXT)`,
    `CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, idempotency_key TEXT NOT NULL UNIQUE,
       content TEXT NOT NULL, reply_to TEXT, disposition TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, task_id TEXT, failed_at INTEGER)`,
    "CREATE INDEX submissions_by_status ON submissions (status, seq)",
    `CREATE TABLE tasks (id TEXT PRIMARY KEY, submission_id TEXT NOT NULL, owner_message_id TEXT NOT NULL, started_at INTEGER NOT NULL, check_at INTEGER NOT NULL)`,
    // Refunds owed to the project owner for failed tasks, until the owner's ledger has taken them.
    "CREATE TABLE pending_refunds (task_id TEXT PRIMARY KEY)",
  ],
  [
    // Every change, in order, for event streams; AUTOINCREMENT so an id is never given out twice.
    "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL, parts INTEGER NOT NULL DEFAULT 1)",
    // The rest of an event's data past its first part (SQLite rows hold at most 2 MB).
    "CREATE TABLE event_parts (event_id INTEGER NOT NULL, part INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (event_id, part))",
    "ALTER TABLE chat ADD COLUMN awaiting_user INTEGER NOT NULL DEFAULT 0",
    // How many partial outputs of the running task have been appended (http agents number them).
    "ALTER TABLE tasks ADD COLUMN partials INTEGER NOT NULL DEFAULT 0",
    // The http agent's callback address now comes from PUBLIC_URL, never from a request.
    "ALTER TABLE chat DROP COLUMN callback_origin",
  ],
  [
    // Credits are taken by the owner's AccountLedger object: whose it is, fixed with the task id, so a refund goes back to it.
    "ALTER TABLE submissions ADD COLUMN account_id TEXT",
    "ALTER TABLE pending_refunds ADD COLUMN account_id TEXT",
  ],
  [
    // Control of running work: steering and cancelled submissions, the queue bound, and the links from a submission to its messages.
    "ALTER TABLE submissions ADD COLUMN kind TEXT NOT NULL DEFAULT 'send'",
    "ALTER TABLE submissions ADD COLUMN content_bytes INTEGER NOT NULL DEFAULT 0",
    // Only waiting entries count for the queue bound; the others keep 0 rather than have every row rewritten.
    "UPDATE submissions SET content_bytes = length(CAST(content AS BLOB)) WHERE status IN ('queued', 'dispatching')",
    "ALTER TABLE submissions ADD COLUMN user_message_id TEXT",
    "ALTER TABLE submissions ADD COLUMN reply_message_id TEXT",
    "ALTER TABLE messages ADD COLUMN submission_id TEXT",
    "CREATE INDEX submissions_by_task ON submissions (task_id)",
    // Earlier messages keep null links (rewriting every row of a long chat could outlast the request that wakes it); the task
    // running now is linked: its reply, and its user message, written just before the reply in the same stretch.
    "UPDATE messages SET submission_id = (SELECT submission_id FROM tasks) WHERE id = (SELECT owner_message_id FROM tasks)",
    `UPDATE messages SET task_id = (SELECT id FROM tasks), submission_id = (SELECT submission_id FROM tasks)
       WHERE seq = (SELECT r.seq - 1 FROM tasks t JOIN messages r ON r.id = t.owner_message_id) AND role = 'user' AND task_id IS NULL`,
    `UPDATE submissions SET reply_message_id = (SELECT owner_message_id FROM tasks),
       user_message_id = (SELECT m.id FROM tasks t JOIN messages r ON r.id = t.owner_message_id JOIN messages m ON m.seq = r.seq - 1 AND m.role = 'user')
       WHERE id = (SELECT submission_id FROM tasks)`,
  ],
  [
    // Queue changes as events per entry: a failed entry leaves the queue when its 24 hours end or newer failures push it out.
    "ALTER TABLE submissions ADD COLUMN left_queue_at INTEGER",
    "CREATE INDEX submissions_failed_in_queue ON submissions (failed_at) WHERE status = 'failed' AND left_queue_at IS NULL",
    // Failed entries older than a day had left the queue before anything recorded it; those of the last day are weighed by their bytes.
    `INSERT OR REPLACE INTO meta (key, value) VALUES ('failed_floor', ${SQL_NOW})`,
    `UPDATE submissions SET content_bytes = length(CAST(content AS BLOB))
       WHERE status = 'failed' AND left_queue_at IS NULL AND failed_at > (SELECT value FROM meta WHERE key = 'failed_floor') - 86400000`,
    // Each event's place in bytes, so whether a replay would pass 8 MB is one lookup; the events before it cannot be resumed from.
    "ALTER TABLE events ADD COLUMN end_offset INTEGER",
    `INSERT OR REPLACE INTO meta (key, value) VALUES ('events_offset_base',
       MAX((SELECT COALESCE(MAX(id), 0) FROM events), (SELECT COALESCE(MAX(value), 0) FROM meta WHERE key = 'events_pruned_through')))`,
  ],
  [
    // A chat upgraded to entry events with more failed entries of the last day than the queue keeps: the oldest leave now,
    // unannounced, so the resume points from before this get a snapshot.
    `INSERT OR REPLACE INTO meta (key, value) SELECT 'events_offset_base', COALESCE(MAX(id), 0) FROM events WHERE EXISTS (${FAILED_BEYOND_BOUND})`,
    `UPDATE submissions SET left_queue_at = ${SQL_NOW} WHERE seq IN (${FAILED_BEYOND_BOUND})`,
  ],
  [
    // Webhook events, written with the change that causes them and handed to the delivery queue from here.
    `CREATE TABLE webhook_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, ref TEXT NOT NULL,
       at INTEGER NOT NULL, handed_off_at INTEGER)`,
    "CREATE INDEX webhook_outbox_by_hand_off ON webhook_outbox (handed_off_at, seq)",
  ],
];

const iso = (ms: number) => new Date(ms).toISOString();
const toMessage = (r: MessageRow): Message => ({
  id: r.id,
  role: r.role,
  content: r.content,
  createdAt: r.created_at,
  status: r.status,
  taskId: r.task_id,
  submissionId: r.submission_id,
});

// Of the newest reply (a running task's is always the newest): its preview, whether that is its whole
// content (so appended text continues it), and its length, to tell the agent how much is written.
type OwnerFacts = { preview: string; previewIsWhole: boolean; newestOwnerLength: number };
/** What the chat summary shows about the messages; kept in memory by the methods that write messages. */
type MessageFacts = { lastMessageAt: string | null; newestOwnerId: string | null } & OwnerFacts;
const previewOf = (content: string) => firstCharacters(content, PREVIEW_MAX);
const ownerFacts = (content: string): OwnerFacts => {
  const preview = previewOf(content);
  return { preview, previewIsWhole: preview.length === content.length, newestOwnerLength: content.length };
};

/**
 * The chat's own SQLite storage: synchronous queries, so callers control where awaits may interleave.
 * This object is the only writer, so what nearly every step reads (the chat row, the summary's facts,
 * the running task) is kept in memory and updated by the methods that write it; an eviction starts afresh.
 */
export class RoomStorage {
  private initialised = false;
  private chatRow: ChatRow | undefined;
  private messageFacts: MessageFacts | undefined;
  // undefined: not read yet; null: no task runs.
  private task: TaskRow | null | undefined;
  // The steering texts the running task has taken, in order (undefined: not read yet).
  private taskSteering: string[] | undefined;
  private refundsMaybeOwed = true;
  readonly submissions: SubmissionStorage;

  constructor(private readonly sql: SqlStorage) {
    this.submissions = new SubmissionStorage(sql);
  }

  /** True once create() has run; reads only, so probing an unknown chat id writes nothing. */
  isInitialised(): boolean {
    this.initialised ||= hasTable(this.sql, "meta");
    return this.initialised;
  }

  migrate(): void {
    this.initialised = true;
    this.chatRow = undefined;
    this.messageFacts = undefined;
    this.submissions.forget();
    this.task = undefined;
    this.taskSteering = undefined;
    migrateSchema(this.sql, MIGRATIONS);
  }

  chat(): ChatRow | undefined {
    this.chatRow ??= this.sql.exec<ChatRow>("SELECT * FROM chat").toArray()[0];
    return this.chatRow;
  }

  /** Writes the chat row; RETURNING keeps the copy in memory exact without reading it again. */
  private writeChat(query: string, ...bindings: unknown[]): void {
    this.chatRow = undefined;
    this.chatRow = this.sql.exec<ChatRow>(`${query} RETURNING *`, ...bindings).one();
  }

  insertChat(row: Pick<ChatRow, "id" | "project_id" | "title" | "created_at">): void {
    this.writeChat(
      "INSERT INTO chat (id, project_id, title, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, 1)",
      row.id,
      row.project_id,
      row.title,
      row.created_at,
      row.created_at,
    );
  }

  /** Records a change to anything the chat summary shows; the index is then behind until synced. */
  touch(now: number): void {
    // Never backwards, so the list order stays stable even if the clock is.
    this.writeChat("UPDATE chat SET updated_at = MAX(updated_at, ?), version = version + 1", iso(now));
  }

  rename(title: string, now: number): void {
    this.writeChat("UPDATE chat SET title = ?", title);
    this.touch(now);
  }

  setArchivedAt(archivedAt: string | null, now: number): void {
    this.writeChat("UPDATE chat SET archived_at = ?", archivedAt);
    this.touch(now);
  }

  /** Whether the agent waits for the user; part of the summary, so it counts as a change. */
  setAwaitingUser(now: number, awaiting: boolean): void {
    if ((this.chat()!.awaiting_user === 1) === awaiting) return;
    this.writeChat("UPDATE chat SET awaiting_user = ?", awaiting ? 1 : 0);
    this.touch(now);
  }

  /** The chat list (the project's ProjectChats object) holds this version of the summary. */
  markListed(version: number): void {
    this.writeChat("UPDATE chat SET indexed_version = MAX(indexed_version, ?)", version);
  }

  view(): Chat {
    const chat = this.chat()!;
    const facts = this.facts();
    return {
      id: chat.id,
      title: chat.title,
      createdAt: chat.created_at,
      updatedAt: chat.updated_at,
      archivedAt: chat.archived_at,
      lastMessageAt: facts.lastMessageAt,
      latestAgentPreview: facts.preview,
      isAwaitingUser: chat.awaiting_user === 1,
      isWorking: this.submissions.isWorking(),
      queuedCount: this.submissions.queuedCount(),
    };
  }

  private facts(): MessageFacts {
    if (this.messageFacts) return this.messageFacts;
    const last = this.sql.exec<{ created_at: string }>("SELECT created_at FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0];
    const owner = this.sql.exec<{ id: string; content: string }>("SELECT id, content FROM messages WHERE role = 'owner' ORDER BY seq DESC LIMIT 1").toArray()[0];
    this.messageFacts = { lastMessageAt: last?.created_at ?? null, newestOwnerId: owner?.id ?? null, ...ownerFacts(owner?.content ?? "") };
    return this.messageFacts;
  }

  // ---- steering texts ----
  /** The running task takes a steering entry: it is done, as part of that task, and its text is the user message named. */
  takeSteering(row: SubmissionRow, task: TaskRow, userMessageId: string): void {
    // Read before the row joins the task, or a list read afresh (after an eviction) would hold it twice.
    const taken = this.steeringTaken(task);
    this.submissions.move(row, "done", { task_id: task.id, user_message_id: userMessageId, reply_message_id: task.owner_message_id });
    taken.push(row.content);
  }

  /** The steering texts the running task has taken, in order: submissions of the task other than its own. */
  steeringTaken(task: TaskRow): string[] {
    this.taskSteering ??= this.sql
      .exec<{ content: string }>("SELECT content FROM submissions WHERE task_id = ? AND id != ? ORDER BY seq", task.id, task.submission_id)
      .toArray()
      .map((r) => r.content);
    return this.taskSteering;
  }

  // ---- messages ----
  hasMessage(id: string): boolean {
    return this.sql.exec("SELECT 1 FROM messages WHERE id = ?", id).toArray().length > 0;
  }

  insertMessage(message: Message): void {
    const facts = this.facts();
    this.sql.exec(
      "INSERT INTO messages (id, role, content, created_at, status, task_id, submission_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
      message.id,
      message.role,
      message.content,
      message.createdAt,
      message.status,
      message.taskId,
      message.submissionId,
    );
    facts.lastMessageAt = message.createdAt;
    if (message.role === "owner") {
      facts.newestOwnerId = message.id;
      Object.assign(facts, ownerFacts(message.content));
    }
  }

  finishMessage(id: string, status: "success" | "failed" | "interrupted_by_user", content: string): void {
    this.sql.exec("UPDATE messages SET status = ?, content = ? WHERE id = ?", status, content, id);
    if (this.messageFacts?.newestOwnerId === id) Object.assign(this.messageFacts, ownerFacts(content));
  }

  appendToMessage(id: string, text: string): void {
    this.sql.exec("UPDATE messages SET content = content || ? WHERE id = ?", text, id);
    const facts = this.messageFacts;
    if (facts?.newestOwnerId !== id) return;
    if (facts.previewIsWhole) Object.assign(facts, ownerFacts(facts.preview + text));
    else facts.newestOwnerLength += text.length;
  }

  /** The length of a reply being written (UTF-16 units), without reading it when this object wrote it. */
  replyLength(messageId: string): number {
    const facts = this.facts();
    return facts.newestOwnerId === messageId ? facts.newestOwnerLength : (this.message(messageId)?.content.length ?? 0);
  }

  message(id: string): Message | undefined {
    const row = this.sql.exec<MessageRow>("SELECT * FROM messages WHERE id = ?", id).toArray()[0];
    return row && toMessage(row);
  }

  /** Newest first, strictly older than beforeSeq: keyset pages stay stable while messages arrive. */
  messagesBefore(beforeSeq: number | null, limit: number): { items: Message[]; lastSeq: number | null; more: boolean } {
    const rows = this.sql.exec<MessageRow>("SELECT * FROM messages WHERE seq < ? ORDER BY seq DESC LIMIT ?", beforeSeq ?? Number.MAX_SAFE_INTEGER, limit + 1).toArray();
    const page = rows.slice(0, limit);
    return {
      items: page.map(toMessage),
      lastSeq: page.at(-1)?.seq ?? null,
      more: rows.length > limit,
    };
  }

  /**
   * The user messages and replies written before a message, newest first, as a model sees them; a
   * lazy cursor, so a long chat is read only as far back as the caller goes.
   */
  *turnsBefore(messageId: string): Generator<Turn> {
    const rows = this.sql.exec<{ role: string; content: string; task_id: string | null }>(
      "SELECT role, content, task_id FROM messages WHERE seq < (SELECT seq FROM messages WHERE id = ?) AND role IN ('user', 'owner') ORDER BY seq DESC",
      messageId,
    );
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

  // ---- the running task (at most one) ----
  runningTask(): TaskRow | undefined {
    if (this.task === undefined) this.task = this.sql.exec<TaskRow>("SELECT * FROM tasks").toArray()[0] ?? null;
    return this.task ?? undefined;
  }

  insertTask(task: Omit<TaskRow, "partials">): void {
    this.sql.exec(
      "INSERT INTO tasks (id, submission_id, owner_message_id, started_at, check_at) VALUES (?, ?, ?, ?, ?)",
      task.id,
      task.submission_id,
      task.owner_message_id,
      task.started_at,
      task.check_at,
    );
    this.task = { ...task, partials: 0 };
    this.taskSteering = [];
  }

  setTaskPartials(id: string, partials: number): void {
    this.sql.exec("UPDATE tasks SET partials = ? WHERE id = ?", partials, id);
    if (this.task?.id === id) this.task.partials = partials;
  }

  setTaskCheckAt(id: string, checkAt: number): void {
    this.sql.exec("UPDATE tasks SET check_at = ? WHERE id = ?", checkAt, id);
    if (this.task?.id === id) this.task.check_at = checkAt;
  }

  deleteTask(id: string): void {
    this.sql.exec("DELETE FROM tasks WHERE id = ?", id);
    // At most one task runs: once the known one is deleted there is none, without reading again.
    this.task = this.task?.id === id ? null : undefined;
    this.taskSteering = undefined;
  }

  owesRefund(taskId: string, accountId: string | null): void {
    this.sql.exec("INSERT OR IGNORE INTO pending_refunds (task_id, account_id) VALUES (?, ?)", taskId, accountId);
    this.refundsMaybeOwed = true;
  }

  /** Refunds not yet taken by a ledger; account_id is null only for tasks charged before ledgers (the project owner's). */
  pendingRefunds(): { task_id: string; account_id: string | null }[] {
    if (!this.refundsMaybeOwed) return [];
    const owed = this.sql.exec<{ task_id: string; account_id: string | null }>("SELECT task_id, account_id FROM pending_refunds").toArray();
    this.refundsMaybeOwed = owed.length > 0;
    return owed;
  }

  refunded(taskId: string): void {
    this.sql.exec("DELETE FROM pending_refunds WHERE task_id = ?", taskId);
  }
}
