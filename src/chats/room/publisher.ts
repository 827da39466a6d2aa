import { iso } from "../../time";
import type { ChatEventType } from "../event-registry";
import { EventLog, REPLAY_MAX_BYTES, sseFrame } from "./event-log";
import type { RoomStorage } from "./room-storage";
import type { Message, Usage } from "../schemas";
import { RETRY_HINT } from "./streams";
import type { QuestionStorage } from "./question-storage";
import type { SubmissionStorage } from "./submission-storage";

/** What every message a task writes carries besides its role, content and status: its task, its submission, no usage yet, no question. */
export const messageOfTask = (taskId: string, submissionId: string, now: number) => ({ createdAt: iso(now), taskId, submissionId, usage: null, questionId: null });

/**
 * Where a change of the chat becomes events: the messages and reply text it writes are stored and
 * logged together, and publish() appends what else changed (its questions, the chat, the queue's entries).
 */
export class RoomPublisher {
  private eventLog: EventLog | undefined;
  // The chat as last published, to append an event only when it changes.
  private publishedChat: string | undefined;
  // The snapshot at the newest event id, encoded once for every stream that opens before the next change.
  private snapshot: { id: number; frame: Uint8Array } | undefined;
  // A reply ended in this change: once its events are all appended, the log folds the rows since its last fold.
  private foldDue = false;

  constructor(
    private readonly sql: SqlStorage,
    private readonly store: RoomStorage,
    private readonly submissions: SubmissionStorage,
    private readonly questions: QuestionStorage,
  ) {}

  // Opened on first use: an object woken for a chat that does not exist has no tables to read.
  private get log(): EventLog {
    return (this.eventLog ??= new EventLog(this.sql));
  }

  /** What an open stream pulls: the encoded events after its cursor. */
  framesAfter(cursor: number, maxBytes: number): ReturnType<EventLog["framesAfter"]> {
    return this.log.framesAfter(cursor, maxBytes);
  }

  /** A message's text as of an event (null: no longer kept). */
  textAt(messageId: string, eventId: number): string | null {
    return this.log.textAt(messageId, eventId);
  }

  /** The newest event id: an answer read in the same synchronous stretch shows every change up to it. */
  newestId(): number {
    return this.log.newestId();
  }

  addMessage(message: Message, now: number): void {
    this.store.insertMessage(message);
    // In the history's key order, whatever the caller's, so an event and a page of messages read alike.
    const { id, role, content, createdAt, status, taskId, submissionId, usage, questionId } = message;
    this.event("message", { id, role, content, createdAt, status, taskId, submissionId, usage, questionId }, now);
  }

  appendToReply(messageId: string, text: string, now: number): void {
    this.store.appendToMessage(messageId, text);
    this.event("message.delta", { id: messageId, text }, now);
  }

  /** A reply's end (and the question it asks): when the final content extends what was streamed, the rest goes out as a last delta first. */
  finishReply(reply: Message, status: "success" | "failed" | "interrupted_by_user", content: string, usage: Usage, questionId: string | null, now: number): void {
    if (content.length > reply.content.length && content.startsWith(reply.content)) {
      this.event("message.delta", { id: reply.id, text: content.slice(reply.content.length) }, now);
    }
    this.store.finishMessage(reply.id, status, content, usage, questionId);
    this.event("message", { ...reply, status, content, usage, questionId }, now);
    this.foldDue = true;
  }

  private event(type: ChatEventType, data: unknown, now: number): void {
    this.log.append(type, JSON.stringify(data), now);
  }

  /**
   * Appends the questions' changes, the chat (if it changed) and the queue's changes (an entry that
   * joined or changed, one that left) to the log, then folds it after a reply's end. Run at the end of every
   * change, before the next await, so the log never lags storage; what it appends is the size of what changed, never the whole queue.
   */
  publish(now: number): void {
    // A question's change comes before the chat event of the same change, which shows it (pendingQuestionId).
    const chatId = this.store.chat()!.id;
    for (const question of this.questions.takeChanges()) this.event("question", this.questions.view(question, chatId), now);
    const chat = JSON.stringify(this.store.view());
    if (chat !== (this.publishedChat ??= this.log.lastData("chat"))) {
      this.log.append("chat", chat, now);
      this.publishedChat = chat;
    }
    for (const change of this.submissions.takeChanges()) {
      if ("entry" in change) this.event("queue.entry", change.entry, now);
      else this.event("queue.removed", { id: change.removed }, now);
    }
    if (this.foldDue) this.log.fold();
    this.foldDue = false;
  }

  /**
   * Where a live event stream starts: a snapshot (or, resuming, every kept event after `resumeFrom`),
   * then each event as it is appended. Call right after publish, in the same synchronous stretch.
   */
  streamStart(resumeFrom: number | null, now: number): { cursor: number; first: Uint8Array[] } {
    const first = [RETRY_HINT];
    if (resumeFrom !== null && this.log.canResumeFrom(resumeFrom, REPLAY_MAX_BYTES)) return { cursor: resumeFrom, first };
    // Read in the same synchronous stretch as the state, so resuming from the snapshot's id misses nothing.
    const cursor = this.log.newestId();
    first.push(this.snapshotAt(cursor, now));
    return { cursor, first };
  }

  /** The snapshot frame at an event id; every change appends an event, so one id has one snapshot. */
  private snapshotAt(id: number, now: number): Uint8Array {
    if (this.snapshot?.id !== id) {
      const state = { chat: this.store.view(), queue: { items: this.submissions.queue(now) } };
      this.snapshot = { id, frame: sseFrame(id, "snapshot", JSON.stringify(state)) };
    }
    return this.snapshot.frame;
  }
}
