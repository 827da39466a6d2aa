import { hasTable, migrateSchema } from "../db/object-schema";
import { PREVIEW_MAX, type Chat, type Message, type QueueEntry } from "./schemas";

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
export type SubmissionStatus = "queued" | "steering" | "dispatching" | "running" | "done" | "failed" | "cancelled";
/** Which call made a submission: keys are shared by both, but a key is bound to the call that used it first. */
export type SubmissionKind = "send" | "steer";
export type SubmissionRow = {
  seq: number;
  id: string;
  idempotency_key: string;
  kind: SubmissionKind;
  content: string;
  content_bytes: number;
  reply_to: string | null;
  disposition: "queued" | "started";
  status: SubmissionStatus;
  created_at: string;
  // The task it ran as, or (a steering text taken) the running task that took it.
  task_id: string | null;
  failed_at: number | null;
  account_id: string | null;
  user_message_id: string | null;
  reply_message_id: string | null;
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
];

const FAILED_KEPT_MS = 24 * 3600_000;
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
type PendingCounts = Record<"queued" | "steering" | "dispatching" | "running", number>;
const isPending = (status: SubmissionStatus): status is keyof PendingCounts => status === "queued" || status === "steering" || status === "dispatching" || status === "running";
/** The statuses the queue bound counts: entries that wait or are being dispatched (a running one has left the queue). */
const isQueued = (status: SubmissionStatus) => status === "queued" || status === "steering" || status === "dispatching";
/** What the queue bound counts: its entries that wait or are being dispatched, and the UTF-8 bytes of their content. */
export type QueueLoad = { entries: number; bytes: number };
const previewOf = (content: string) => [...content.slice(0, PREVIEW_MAX * 2)].slice(0, PREVIEW_MAX).join("");
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
  // How many submissions are in each unfinished status, and the bytes the queue bound counts; kept by the methods that set a status.
  private pendingCounts: PendingCounts | undefined;
  private queuedBytes: number | undefined;
  // undefined: not read yet; null: no task runs.
  private task: TaskRow | null | undefined;
  // The steering texts the running task has taken, in order (undefined: not read yet).
  private taskSteering: string[] | undefined;
  private refundsMaybeOwed = true;
  /** Changes whenever a submission is added or changes status, so the queue is rendered again only then. */
  queueVersion = 0;

  constructor(private readonly sql: SqlStorage) {}

  /** True once create() has run; reads only, so probing an unknown chat id writes nothing. */
  isInitialised(): boolean {
    this.initialised ||= hasTable(this.sql, "meta");
    return this.initialised;
  }

  migrate(): void {
    this.initialised = true;
    this.chatRow = undefined;
    this.messageFacts = undefined;
    this.pendingCounts = undefined;
    this.queuedBytes = undefined;
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
    const counts = this.counts();
    return {
      id: chat.id,
      title: chat.title,
      createdAt: chat.created_at,
      updatedAt: chat.updated_at,
      archivedAt: chat.archived_at,
      lastMessageAt: facts.lastMessageAt,
      latestAgentPreview: facts.preview,
      isAwaitingUser: chat.awaiting_user === 1,
      isWorking: this.isWorking(),
      queuedCount: counts.queued,
    };
  }

  private facts(): MessageFacts {
    if (this.messageFacts) return this.messageFacts;
    const last = this.sql.exec<{ created_at: string }>("SELECT created_at FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0];
    const owner = this.sql.exec<{ id: string; content: string }>("SELECT id, content FROM messages WHERE role = 'owner' ORDER BY seq DESC LIMIT 1").toArray()[0];
    this.messageFacts = { lastMessageAt: last?.created_at ?? null, newestOwnerId: owner?.id ?? null, ...ownerFacts(owner?.content ?? "") };
    return this.messageFacts;
  }

  private counts(): PendingCounts {
    if (this.pendingCounts) return this.pendingCounts;
    const counts: PendingCounts = { queued: 0, steering: 0, dispatching: 0, running: 0 };
    let bytes = 0;
    for (const row of this.sql.exec<{ status: SubmissionStatus; n: number; bytes: number }>(
      "SELECT status, COUNT(*) AS n, SUM(content_bytes) AS bytes FROM submissions WHERE status IN ('queued', 'steering', 'dispatching', 'running') GROUP BY status",
    )) {
      if (isPending(row.status)) counts[row.status] = row.n;
      if (isQueued(row.status)) bytes += row.bytes;
    }
    this.pendingCounts = counts;
    this.queuedBytes = bytes;
    return counts;
  }

  /** What the queue bound counts now. */
  queueLoad(): QueueLoad {
    const counts = this.counts();
    return { entries: counts.queued + counts.steering + counts.dispatching, bytes: this.queuedBytes! };
  }

  /** Keeps the counts and the queue's bytes exact when a submission moves from one status to another. */
  private moved(from: SubmissionStatus | null, to: SubmissionStatus, contentBytes: number): void {
    const counts = this.pendingCounts;
    if (counts) {
      if (from && isPending(from)) counts[from]--;
      if (isPending(to)) counts[to]++;
      if (from && isQueued(from)) this.queuedBytes! -= contentBytes;
      if (isQueued(to)) this.queuedBytes! += contentBytes;
    }
    this.queueVersion++;
  }

  // ---- submissions ----
  submissionByKey(key: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE idempotency_key = ?", key).toArray()[0];
  }

  /** A task runs or is being dispatched: what the summary's isWorking shows. */
  isWorking(): boolean {
    const counts = this.counts();
    return counts.dispatching + counts.running > 0;
  }

  hasPendingWork(): boolean {
    const counts = this.counts();
    return counts.queued + counts.steering + counts.dispatching + counts.running > 0;
  }

  insertSubmission(
    row: Pick<SubmissionRow, "id" | "idempotency_key" | "kind" | "content" | "content_bytes" | "reply_to" | "disposition" | "status" | "created_at">,
  ): SubmissionRow {
    this.counts();
    const inserted = this.sql
      .exec<SubmissionRow>(
        `INSERT INTO submissions (id, idempotency_key, kind, content, content_bytes, reply_to, disposition, status, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        row.id,
        row.idempotency_key,
        row.kind,
        row.content,
        row.content_bytes,
        row.reply_to,
        row.disposition,
        row.status,
        row.created_at,
      )
      .one();
    this.moved(null, row.status, row.content_bytes);
    return inserted;
  }

  /** The next submission to dispatch: one already dispatching (resumed after a restart) or the oldest queued. */
  nextSubmission(): SubmissionRow | undefined {
    // An index lookup, and only for a status some submission has.
    const counts = this.counts();
    const first = (status: SubmissionStatus) => this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE status = ? ORDER BY seq LIMIT 1", status).toArray()[0];
    return (counts.dispatching > 0 ? first("dispatching") : undefined) ?? (counts.queued > 0 ? first("queued") : undefined);
  }

  /** Moves a submission from the status it has (`from`, as the caller read it) to another. */
  setSubmission(
    { id, status: from, content_bytes }: Pick<SubmissionRow, "id" | "status" | "content_bytes">,
    status: SubmissionStatus,
    extra: Partial<Pick<SubmissionRow, "task_id" | "account_id" | "failed_at" | "user_message_id" | "reply_message_id">> = {},
  ): void {
    this.sql.exec(
      `UPDATE submissions SET status = ?, task_id = COALESCE(?, task_id), account_id = COALESCE(?, account_id), failed_at = COALESCE(?, failed_at),
         user_message_id = COALESCE(?, user_message_id), reply_message_id = COALESCE(?, reply_message_id) WHERE id = ?`,
      status,
      extra.task_id ?? null,
      extra.account_id ?? null,
      extra.failed_at ?? null,
      extra.user_message_id ?? null,
      extra.reply_message_id ?? null,
      id,
    );
    this.moved(from, status, content_bytes);
  }

  /** A task's own submission is done when the task ends (it was running, so it holds no place in the queue). */
  finishSubmission(id: string): void {
    this.sql.exec("UPDATE submissions SET status = 'done' WHERE id = ?", id);
    this.moved("running", "done", 0);
  }

  // ---- steering texts ----
  /** Steering entries waiting for the running task, oldest first. */
  steeringWaiting(limit: number): SubmissionRow[] {
    if (this.counts().steering === 0 || limit <= 0) return [];
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE status = 'steering' ORDER BY seq LIMIT ?", limit).toArray();
  }

  /** The running task takes a steering entry: it is done, as part of that task, and its text is the user message named. */
  takeSteering(row: SubmissionRow, task: TaskRow, userMessageId: string): void {
    // Read before the row joins the task, or a list read afresh (after an eviction) would hold it twice.
    const taken = this.steeringTaken(task);
    this.setSubmission(row, "done", { task_id: task.id, user_message_id: userMessageId, reply_message_id: task.owner_message_id });
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

  /** The task ended before taking them: steering entries wait as queued, in their place in submission order. */
  requeueSteering(): void {
    const counts = this.counts();
    if (counts.steering === 0) return;
    this.sql.exec("UPDATE submissions SET status = 'queued' WHERE status = 'steering'");
    counts.queued += counts.steering;
    counts.steering = 0;
    this.queueVersion++;
  }

  /** The queue as clients see it, and when it next changes by itself: the oldest failed entry's 24 hours end. */
  queue(now: number): { items: QueueEntry[]; changesAt: number } {
    let changesAt = Number.POSITIVE_INFINITY;
    const items = this.sql
      .exec<{ id: string; content: string; status: string; created_at: string; failed_at: number | null }>(
        `SELECT id, content, status, created_at, failed_at FROM submissions
           WHERE status IN ('queued', 'steering', 'dispatching') OR (status = 'failed' AND failed_at > ?) ORDER BY seq`,
        now - FAILED_KEPT_MS,
      )
      .toArray()
      .map((r) => {
        if (r.failed_at !== null) changesAt = Math.min(changesAt, r.failed_at + FAILED_KEPT_MS);
        return { id: r.id, content: r.content, status: r.status as QueueEntry["status"], createdAt: r.created_at };
      });
    return { items, changesAt };
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

  /** The submission a task ran for (steering texts it took come later in submission order). */
  submissionOfTask(taskId: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE task_id = ? ORDER BY seq LIMIT 1", taskId).toArray()[0];
  }

  submission(id: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE id = ?", id).toArray()[0];
  }
}
