import { takesText, type AskedQuestion } from "../../agent/asked-question";
import type { TaskAnswer } from "../../agent/port";
import { iso } from "../../time";
import { answerJson, statusAfter } from "./answers";
import type { Question, QuestionStatus } from "../question-schemas";
import type { WebhookOutbox } from "./webhook-outbox";
import type { Answer } from "../../agent/question-shapes";

/** One question as the chat object stores it: JSON for the nested fields, times in milliseconds. */
export type QuestionRow = {
  id: string;
  task_id: string;
  message_id: string;
  kind: Question["kind"];
  status: QuestionStatus;
  prompt: string;
  options: string | null;
  multi_select: number;
  allow_text: number;
  action: string | null;
  url: string | null;
  created_at: number;
  // Null only for a question the schema upgrade made for a chat that was awaiting: it expires QUESTION_TTL_HOURS after created_at.
  expires_at: number | null;
  closed_at: number | null;
  answer: string | null;
  submission_id: string | null;
};
// The reason a withdrawn question's answer gives: nobody answered it, the client that waited on it cancelled.
const WITHDRAWN_REASON = "Cancelled by the client";
type Closing = { status: QuestionStatus; answer?: string | null; submissionId?: string | null };

/**
 * The questions the chat's agent asked. At most one is pending (kept in memory, so the chat summary
 * and the expiry's due time cost no query); every status change is recorded for followers and written
 * to the webhook outbox in the same synchronous stretch as the change that makes it.
 */
export class QuestionStorage {
  // undefined: not read since the object started; null: none pending.
  private pendingRow: QuestionRow | null | undefined;
  private changes: QuestionRow[] = [];

  constructor(
    private readonly sql: SqlStorage,
    private readonly outbox: WebhookOutbox,
    private readonly ttlMs: number,
  ) {}

  /** Drops what memory holds (the schema has just changed). */
  forget(): void {
    this.pendingRow = undefined;
    this.changes = [];
  }

  pending(): QuestionRow | undefined {
    // Read once per wake: null (none pending) is remembered too, since every change's summary and alarm ask.
    if (this.pendingRow === undefined) this.pendingRow = this.sql.exec<QuestionRow>("SELECT * FROM questions WHERE status = 'pending'").toArray()[0] ?? null;
    return this.pendingRow ?? undefined;
  }

  byId(id: string): QuestionRow | undefined {
    return this.sql.exec<QuestionRow>("SELECT * FROM questions WHERE id = ?", id).toArray()[0];
  }

  /** A task's reply asks: the question pending until now is superseded, and this one (its id returned) is pending until it is answered or expires. */
  ask(asked: AskedQuestion, ids: { taskId: string; messageId: string }, now: number): string {
    const earlier = this.pending();
    if (earlier) this.close(earlier, { status: "superseded" }, now);
    const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
    const row = this.sql
      .exec<QuestionRow>(
        `INSERT INTO questions (id, task_id, message_id, kind, status, prompt, options, multi_select, allow_text, action, url, created_at, expires_at)
           VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        crypto.randomUUID(),
        ids.taskId,
        ids.messageId,
        asked.kind,
        asked.prompt,
        json(asked.options),
        asked.multiSelect ? 1 : 0,
        asked.allowText ? 1 : 0,
        json(asked.action),
        asked.url,
        now,
        now + this.ttlMs,
      )
      .one();
    this.pendingRow = row;
    this.changes.push(row);
    this.outbox.record("question.asked", row.id, now);
    return row.id;
  }

  /** An accepted answer closes its (pending) question: answered, or declined; returns its id. */
  answer(row: QuestionRow, answer: Answer, submissionId: string, now: number): string {
    this.close(row, { status: statusAfter(answer), answer: answerJson(answer), submissionId }, now);
    return row.id;
  }

  /** A send or steer accepted while a question is pending: one that takes text is answered with it (its id returned), any other superseded. */
  closeBySend(content: string, submissionId: string, now: number): string | undefined {
    const pending = this.pending();
    if (!pending) return undefined;
    if (!takesText({ kind: pending.kind, allowText: pending.allow_text === 1 })) {
      this.close(pending, { status: "superseded", submissionId }, now);
      return undefined;
    }
    this.close(pending, { status: "answered", answer: answerJson({ text: content }), submissionId }, now);
    return pending.id;
  }

  /**
   * A client cancelled the chain that waits on this question: it closes declined with no submission, so no task
   * starts, nothing is charged and the agent is not told (as for expiry).
   */
  withdraw(row: QuestionRow, now: number): void {
    this.close(row, { status: "declined", answer: answerJson({ decline: true, reason: WITHDRAWN_REASON }), submissionId: null }, now);
  }

  /** Closes a pending question: answered or declined by a submission, superseded (by a send, or by a later question) or expired. */
  private close(row: QuestionRow, closing: Closing, now: number): void {
    const closed = this.sql
      .exec<QuestionRow>(
        "UPDATE questions SET status = ?, closed_at = ?, answer = ?, submission_id = ? WHERE id = ? AND status = 'pending' RETURNING *",
        closing.status,
        now,
        closing.answer ?? null,
        closing.submissionId ?? null,
        row.id,
      )
      .toArray()[0];
    if (!closed) return;
    if (this.pendingRow?.id === row.id) this.pendingRow = null;
    this.changes.push(closed);
    this.outbox.record("question.closed", closed.id, now);
  }

  /** The question a submission answered (or declined), as its task's agent is told; an ordinary send that answered gave its text. */
  answeredBy(submission: { id: string; question_id: string | null }): TaskAnswer | null {
    const question = submission.question_id ? this.byId(submission.question_id) : undefined;
    if (question?.submission_id !== submission.id || question.answer === null) return null;
    return { questionId: question.id, kind: question.kind, ...JSON.parse(question.answer) };
  }

  /** When the pending question expires; undefined when none is pending. */
  expiryDue(): number | undefined {
    const pending = this.pending();
    return pending && this.expiresAt(pending);
  }

  /** The pending question expires when its time has come; true when it did. */
  expire(now: number): boolean {
    const pending = this.pending();
    if (!pending || this.expiresAt(pending) > now) return false;
    this.close(pending, { status: "expired" }, now);
    return true;
  }

  /** The questions that changed since the last call, each as it then stood, for the event log. */
  takeChanges(): QuestionRow[] {
    const changes = this.changes;
    this.changes = [];
    return changes;
  }

  view(row: QuestionRow, chatId: string): Question {
    return {
      id: row.id,
      chatId,
      taskId: row.task_id,
      messageId: row.message_id,
      kind: row.kind,
      status: row.status,
      prompt: row.prompt,
      options: row.options === null ? null : JSON.parse(row.options),
      multiSelect: row.multi_select === 1,
      allowText: row.allow_text === 1,
      action: row.action === null ? null : JSON.parse(row.action),
      url: row.url,
      createdAt: iso(row.created_at),
      expiresAt: iso(this.expiresAt(row)),
      closedAt: row.closed_at === null ? null : iso(row.closed_at),
      answer: row.answer === null ? null : JSON.parse(row.answer),
      submissionId: row.submission_id,
    };
  }

  /** The question as it stood when it was asked: what it asked never changes, only how it closed. */
  viewAsAsked(row: QuestionRow, chatId: string): Question {
    return this.view({ ...row, status: "pending", closed_at: null, answer: null, submission_id: null }, chatId);
  }

  private expiresAt(row: QuestionRow): number {
    return row.expires_at ?? row.created_at + this.ttlMs;
  }
}
