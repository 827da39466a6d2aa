import { iso } from "../../time";
import { FORK_LIMITS } from "../limits";
import type { ForkAsk, ForkBatch, ForkFill, ForkProgress, ForkSourceOutcome } from "../room-calls";
import type { Message } from "../schemas";
import type { Change } from "./change";
import type { RoomPublisher } from "./publisher";
import type { ChatRow, RoomStorage } from "./room-storage";
import type { SubmissionStorage } from "./submission-storage";

const TITLE_MAX = 160;

type KeyRow = { fingerprint: string; fork_chat_id: string; through_seq: number; at_message_id: string; title: string; rerun_content: string | null };
type MessageRow = { seq: number; role: Message["role"]; content: string; status: Message["status"]; created_at: string; submission_id: string | null };

const cut = (text: string, max: number) => [...text].slice(0, max).join("");

/**
 * Forking a chat: the source plans a fork in one synchronous stretch (its key claimed only when the fork is allowed) and
 * hands its history over in bounded batches, each one read; the fork is made empty and fills in order, each batch once
 * however many requests drive it (retries of one key run at once), then joins the project's chat list.
 */
export class RoomForks {
  constructor(
    private readonly sql: SqlStorage,
    private readonly store: RoomStorage,
    private readonly submissions: SubmissionStorage,
    private readonly publisher: RoomPublisher,
    private readonly change: Change,
    private readonly syncList: () => Promise<void>,
  ) {}

  /** The source's side: a plan, or a batch. */
  source(chat: ChatRow, ask: ForkAsk): ForkSourceOutcome {
    return ask.kind === "plan" ? this.plan(chat, ask) : this.batch(ask.afterSeq, ask.throughSeq);
  }

  /** In the contract's order: a key seen before, the fork point and rerun, a working message, the size, a rerun's credit limit; then the key is claimed. */
  private plan(chat: ChatRow, ask: Extract<ForkAsk, { kind: "plan" }>): ForkSourceOutcome {
    const forkedFrom = (messageId: string) => ({ chatId: chat.id, messageId });
    const held = this.sql.exec<KeyRow>("SELECT * FROM fork_keys WHERE key = ?", ask.key).toArray()[0];
    if (held) {
      if (held.fingerprint !== ask.fingerprint) return { kind: "fork_key_reused" };
      const { fork_chat_id: forkChatId, through_seq: throughSeq, title, rerun_content: rerunContent } = held;
      return { kind: "plan", forkChatId, replayed: true, throughSeq, title, forkedFrom: forkedFrom(held.at_message_id), rerunContent };
    }
    const at = this.sql.exec<MessageRow>("SELECT seq, role, content, status, created_at, submission_id FROM messages WHERE id = ?", ask.atMessageId).toArray()[0];
    if (!at) return { kind: "unknown_fork_point" };
    if (ask.rerun && !this.beganTask(at, ask.atMessageId)) return { kind: "rerun_not_a_task_start" };
    // A steering text taken by a running task comes after its working reply, so "at or before" finds that reply too.
    if (this.sql.exec("SELECT 1 FROM messages WHERE seq <= ? AND status = 'working' LIMIT 1", at.seq).toArray().length > 0) return { kind: "message_working" };
    const throughSeq = ask.rerun ? at.seq - 1 : at.seq;
    const size = this.sql
      .exec<{ n: number; bytes: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(length(CAST(content AS BLOB))), 0) AS bytes FROM messages WHERE seq <= ?", throughSeq)
      .one();
    if (size.n > FORK_LIMITS.messages || size.bytes > FORK_LIMITS.bytes) return { kind: "fork_too_long" };
    if (ask.rerun && ask.creditLimited) return { kind: "credit_limit" };
    const title = ask.title ?? cut(`${chat.title} (fork)`, TITLE_MAX);
    const forkChatId = crypto.randomUUID();
    const rerunContent = ask.rerun ? at.content : null;
    this.sql.exec(
      "INSERT INTO fork_keys (key, fingerprint, fork_chat_id, through_seq, at_message_id, title, rerun_content) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ask.key,
      ask.fingerprint,
      forkChatId,
      throughSeq,
      ask.atMessageId,
      title,
      rerunContent,
    );
    return { kind: "plan", forkChatId, replayed: false, throughSeq, title, forkedFrom: forkedFrom(ask.atMessageId), rerunContent };
  }

  /** Whether a user message began a task: a send's own (not a steering text, not an answer to a question). */
  private beganTask(at: MessageRow, messageId: string): boolean {
    const submission = at.role === "user" && at.submission_id ? this.submissions.byId(at.submission_id) : undefined;
    return submission?.kind === "send" && (submission.chain_root_id === null || submission.chain_root_id === submission.id) && submission.user_message_id === messageId;
  }

  /** The next messages after a seq, through the plan's: at most a batch's count and bytes (at least one message). */
  private batch(afterSeq: number, throughSeq: number): ForkBatch {
    const rows = this.sql
      .exec<MessageRow>(
        "SELECT seq, role, content, status, created_at FROM messages WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
        afterSeq,
        throughSeq,
        FORK_LIMITS.batchMessages + 1,
      )
      .toArray();
    const taken: MessageRow[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, FORK_LIMITS.batchMessages)) {
      bytes += new TextEncoder().encode(row.content).byteLength;
      if (taken.length > 0 && bytes > FORK_LIMITS.batchBytes) break;
      taken.push(row);
    }
    const messages = taken.map((row) => ({ role: row.role, content: row.content, status: row.status, createdAt: row.created_at }));
    return { kind: "batch", messages, lastSeq: taken.at(-1)?.seq ?? throughSeq, done: taken.length === rows.length };
  }

  /**
   * The fork's side: the batch that follows what it holds is copied (new ids; role, content, status and time kept; no
   * task, submission, usage or question), each with its `message` event, the chat made with the first (so its log
   * starts with the copies); a batch another request copied already changes nothing. The whole copy joins the chat list.
   */
  async fill(projectId: string, chatId: string, fill: ForkFill): Promise<ForkProgress> {
    const { batch } = fill;
    const chat = this.store.chat();
    if (chat ? chat.fork_copied_seq === fill.afterSeq : fill.afterSeq === 0) {
      const now = Date.now();
      this.change(now, () => {
        if (!chat) {
          const forkedFrom = JSON.stringify(fill.forkedFrom);
          this.store.insertChat({ id: chatId, project_id: projectId, title: fill.title, created_at: iso(now), forked_from: forkedFrom, fork_copied_seq: 0 });
        }
        for (const copy of batch.messages) {
          this.publisher.addMessage({ id: crypto.randomUUID(), ...copy, taskId: null, submissionId: null, usage: null, questionId: null }, now);
        }
        this.store.setForkCopied(batch.done ? null : batch.lastSeq);
      });
      if (batch.done) await this.syncList();
    }
    return { copiedSeq: this.store.chat()!.fork_copied_seq };
  }
}
