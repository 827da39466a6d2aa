import { hasTable, migrateSchema } from "../../db/object-schema";
import { iso } from "../../time";
import { firstCharacters } from "../../text";
import type { StoredTurn } from "./earlier-turns";
import { MIGRATIONS } from "./room-schema";
import type { TokenUsage } from "../../agent/port";
import { PREVIEW_MAX, type Chat, type Message, type Usage } from "../schemas";
import type { QuestionStorage } from "./question-storage";
import type { SubmissionStorage } from "./submission-storage";

type PendingRefund = { task_id: string; account_id: string | null; credential: string | null };
export type ChatRow = {
  id: string;
  project_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  version: number;
  indexed_version: number;
  tasks_listed_seq: number;
  a2a_context: string | null;
  forked_from: string | null;
  fork_copied_seq: number | null;
};
/** The running task; its token counts so far are the sums of what its model calls reported (null: none did). */
export type TaskRow = {
  id: string;
  submission_id: string;
  reply_message_id: string;
  started_at: number;
  check_at: number;
  partials: number;
  input_tokens: number | null;
  output_tokens: number | null;
};
type MessageRow = {
  seq: number;
  id: string;
  role: Message["role"];
  content: string;
  created_at: string;
  status: Message["status"];
  task_id: string | null;
  submission_id: string | null;
  usage: string | null;
  question_id: string | null;
};

const toMessage = (r: MessageRow): Message => ({
  id: r.id,
  role: r.role,
  content: r.content,
  createdAt: r.created_at,
  status: r.status,
  taskId: r.task_id,
  submissionId: r.submission_id,
  usage: r.usage === null ? null : (JSON.parse(r.usage) as Usage),
  questionId: r.question_id,
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
  private refundsMaybeOwed = true;

  constructor(
    private readonly sql: SqlStorage,
    // Read for the summary's counts; the chat object writes submissions through its own reference.
    private readonly submissions: SubmissionStorage,
    // Read for the summary's pending question; the chat object and its task runner ask and close questions.
    private readonly questions: QuestionStorage,
  ) {}

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
    this.questions.forget();
    this.task = undefined;
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

  insertChat(row: Pick<ChatRow, "id" | "project_id" | "title" | "created_at"> & Partial<Pick<ChatRow, "a2a_context" | "forked_from" | "fork_copied_seq">>): void {
    this.writeChat(
      "INSERT INTO chat (id, project_id, title, created_at, updated_at, version, a2a_context, forked_from, fork_copied_seq) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)",
      row.id,
      row.project_id,
      row.title,
      row.created_at,
      row.created_at,
      row.a2a_context ?? null,
      row.forked_from ?? null,
      row.fork_copied_seq ?? null,
    );
  }

  /** Records a change to anything the chat summary shows; the index is then behind until synced. */
  touch(now: number): void {
    const chat = this.chat()!;
    // Never backwards, so the list order stays stable even if the clock is.
    const updatedAt = iso(Math.max(now, Date.parse(chat.updated_at)));
    this.sql.exec("UPDATE chat SET updated_at = ?, version = ?", updatedAt, chat.version + 1);
    this.chatRow = { ...chat, updated_at: updatedAt, version: chat.version + 1 };
  }

  /** A fork's copy has come this far (the source's last copied seq), or is whole (null). */
  setForkCopied(seq: number | null): void {
    this.writeChat("UPDATE chat SET fork_copied_seq = ?", seq);
  }

  rename(title: string): void {
    this.writeChat("UPDATE chat SET title = ?", title);
  }

  setArchivedAt(archivedAt: string | null): void {
    this.writeChat("UPDATE chat SET archived_at = ?", archivedAt);
  }

  /** The chat list (the project's ProjectChats object) holds this version of the summary, and the tasks up to that submission. */
  markListed(version: number, tasksSeq: number): void {
    const chat = this.chat()!;
    if (version <= chat.indexed_version && tasksSeq <= chat.tasks_listed_seq) return;
    const listed = { indexed_version: Math.max(version, chat.indexed_version), tasks_listed_seq: Math.max(tasksSeq, chat.tasks_listed_seq) };
    this.sql.exec("UPDATE chat SET indexed_version = ?, tasks_listed_seq = ?", listed.indexed_version, listed.tasks_listed_seq);
    this.chatRow = { ...chat, ...listed };
  }

  view(): Chat {
    const chat = this.chat()!;
    const facts = this.facts();
    const pendingQuestionId = this.questions.pending()?.id ?? null;
    return {
      id: chat.id,
      title: chat.title,
      createdAt: chat.created_at,
      updatedAt: chat.updated_at,
      archivedAt: chat.archived_at,
      lastMessageAt: facts.lastMessageAt,
      latestAgentPreview: facts.preview,
      isAwaitingUser: pendingQuestionId !== null,
      pendingQuestionId,
      isWorking: this.submissions.isWorking(),
      queuedCount: this.submissions.queuedCount(),
      forkedFrom: chat.forked_from === null ? null : (JSON.parse(chat.forked_from) as Chat["forkedFrom"]),
    };
  }

  private facts(): MessageFacts {
    if (this.messageFacts) return this.messageFacts;
    const last = this.sql.exec<{ created_at: string }>("SELECT created_at FROM messages ORDER BY seq DESC LIMIT 1").toArray()[0];
    const owner = this.sql.exec<{ id: string; content: string }>("SELECT id, content FROM messages WHERE role = 'owner' ORDER BY seq DESC LIMIT 1").toArray()[0];
    this.messageFacts = { lastMessageAt: last?.created_at ?? null, newestOwnerId: owner?.id ?? null, ...ownerFacts(owner?.content ?? "") };
    return this.messageFacts;
  }

  // ---- messages ----
  hasMessage(id: string): boolean {
    return this.sql.exec("SELECT 1 FROM messages WHERE id = ?", id).toArray().length > 0;
  }

  insertMessage(message: Message): void {
    const facts = this.facts();
    this.sql.exec(
      "INSERT INTO messages (id, role, content, created_at, status, task_id, submission_id, usage, question_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      message.id,
      message.role,
      message.content,
      message.createdAt,
      message.status,
      message.taskId,
      message.submissionId,
      message.usage === null ? null : JSON.stringify(message.usage),
      message.questionId,
    );
    facts.lastMessageAt = message.createdAt;
    if (message.role === "owner") {
      facts.newestOwnerId = message.id;
      Object.assign(facts, ownerFacts(message.content));
    }
  }

  /** A reply's end: its status, its final content, what its task cost and the question it asks, fixed from then on. */
  finishMessage(id: string, status: "success" | "failed" | "interrupted_by_user", content: string, usage: Usage, questionId: string | null): void {
    this.sql.exec(
      "UPDATE messages SET status = ?, content = ?, usage = ?, question_id = ?, ended_at = ? WHERE id = ?",
      status,
      content,
      JSON.stringify(usage),
      questionId,
      Date.now(),
      id,
    );
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

  /** The text of the error message a submission's failure wrote, when it has one. */
  errorOf(submissionId: string): string | undefined {
    return this.sql.exec<{ content: string }>("SELECT content FROM messages WHERE submission_id = ? AND role = 'error' ORDER BY seq DESC LIMIT 1", submissionId).toArray()[0]
      ?.content;
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

  /** The user messages and replies stored before a message, newest first: a lazy cursor over them. */
  turnsBefore(messageId: string): Iterable<StoredTurn> {
    return this.sql.exec<StoredTurn>(
      "SELECT role, content, task_id FROM messages WHERE seq < (SELECT seq FROM messages WHERE id = ?) AND role IN ('user', 'owner') ORDER BY seq DESC",
      messageId,
    );
  }

  // ---- the running task (at most one) ----
  runningTask(): TaskRow | undefined {
    if (this.task === undefined) this.task = this.sql.exec<TaskRow>("SELECT * FROM tasks").toArray()[0] ?? null;
    return this.task ?? undefined;
  }

  insertTask(task: Omit<TaskRow, "partials" | "input_tokens" | "output_tokens">): void {
    this.sql.exec(
      "INSERT INTO tasks (id, submission_id, reply_message_id, started_at, check_at) VALUES (?, ?, ?, ?, ?)",
      task.id,
      task.submission_id,
      task.reply_message_id,
      task.started_at,
      task.check_at,
    );
    this.task = { ...task, partials: 0, input_tokens: null, output_tokens: null };
  }

  /** Adds what one of the running task's model calls reported. */
  addTaskUsage(id: string, usage: TokenUsage): void {
    const [row] = this.sql
      .exec<Pick<TaskRow, "input_tokens" | "output_tokens">>(
        "UPDATE tasks SET input_tokens = COALESCE(input_tokens, 0) + ?, output_tokens = COALESCE(output_tokens, 0) + ? WHERE id = ? RETURNING input_tokens, output_tokens",
        usage.inputTokens,
        usage.outputTokens,
        id,
      )
      .toArray();
    if (row && this.task?.id === id) Object.assign(this.task, row);
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
  }

  /** A failed task's credits are owed back to the account that paid, and no longer count against the credential that sent it. */
  owesRefund(taskId: string, accountId: string | null, credential: string | null): void {
    this.sql.exec("INSERT OR IGNORE INTO pending_refunds (task_id, account_id, credential) VALUES (?, ?, ?)", taskId, accountId, credential);
    this.refundsMaybeOwed = true;
  }

  /** Refunds not yet taken by a ledger; account_id is null only for tasks charged before ledgers (the project owner's), credential for tasks from before credentials were counted. */
  pendingRefunds(): PendingRefund[] {
    if (!this.refundsMaybeOwed) return [];
    const owed = this.sql.exec<PendingRefund>("SELECT task_id, account_id, credential FROM pending_refunds").toArray();
    this.refundsMaybeOwed = owed.length > 0;
    return owed;
  }

  refunded(taskId: string): void {
    this.sql.exec("DELETE FROM pending_refunds WHERE task_id = ?", taskId);
  }
}
