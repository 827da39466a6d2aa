import { DurableObject } from "cloudflare:workers";
import { agentFor } from "../../agent/select";
import type { AgentResult } from "../../agent/port";
import { config } from "../../config";
import { sha256Hex } from "../../crypto";
import type { Env } from "../../env";
import { offerProjectState } from "../../projects/access";
import { iso } from "../../time";
import { answerJson, fitAnswer, type Fit } from "./answers";
import { nothing, type Listing } from "./change";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { BackedOffJob, ChatListSync, Refunds, type DeferredJob } from "./deferred-jobs";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import type { StreamGrant } from "./listeners";
import { offerMaintenanceFlag } from "../maintenance";
import { RoomPublisher } from "./publisher";
import { ChatStreams } from "./streams";
import { QuestionStorage } from "./question-storage";
import { RoomStorage, type ChatRow } from "./room-storage";
import type { Chat, QueueEntry } from "../schemas";
import { SubmissionStorage } from "./submission-storage";
import { TaskRunner, type EndedTask, type PartialOutcome, type SteeringAck, type SteeringOffer } from "./task-runner";
import { WebhookHandOff } from "./webhook-handoff";
import { UsageOutbox } from "./usage-outbox";
import { WebhookOutbox } from "./webhook-outbox";
import { webhookPayload } from "./webhook-payload";
import type { Answer } from "../../agent/question-shapes";
import type { CancelOutcome, MessageOutcome, MessageRead, MessagesOutcome, QuestionOutcome, SubmissionOutcome, SubmitOutcome, SubmitRequest } from "../room-calls";

const utf8 = new TextEncoder();

/**
 * One object per chat, the single source of truth for its title, archive state, messages, queue,
 * idempotency keys and running task. Requests only record, each as one change; the task runner runs
 * tasks one at a time; the alarm is set for whatever is due first, the runner's work or a deferred job.
 */
export class ChatRoom extends DurableObject<Env> {
  private readonly store: RoomStorage;
  private readonly submissions: SubmissionStorage;
  private readonly questions: QuestionStorage;
  private readonly outbox: WebhookOutbox;
  private readonly publisher: RoomPublisher;
  private readonly streams: ChatStreams;
  private readonly runner: TaskRunner;
  private readonly refunds: Refunds;
  private readonly listSync: ChatListSync;
  // In the order the alarm runs them: credits go back before the next task is charged, the chat list hears last.
  protected readonly work: BackedOffJob[];
  // The alarm as this object last set it (undefined: not known, read nothing into it).
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.submissions = new SubmissionStorage(sql);
    this.outbox = new WebhookOutbox(sql);
    this.questions = new QuestionStorage(sql, this.outbox, config(env).questionTtlMs);
    this.store = new RoomStorage(sql, this.submissions, this.questions);
    const handOff = new WebhookHandOff(env, ctx, this.store, this.outbox, () => this.reschedule(Date.now()));
    this.publisher = new RoomPublisher(sql, this.store, this.submissions, this.questions, handOff, () => this.streams.wake());
    this.streams = new ChatStreams(ctx, env, this.publisher);
    this.refunds = new Refunds(env, this.store);
    const usage = new UsageOutbox(sql);
    this.listSync = new ChatListSync(env, this.store, usage);
    const agent = agentFor(config(env), { ai: env.AI, keepAlive: (work) => ctx.waitUntil(work) });
    const change = this.change.bind(this);
    this.runner = new TaskRunner(env, ctx, this.store, this.submissions, this.questions, this.outbox, usage, this.publisher, agent, change, () => this.runJob(this.refunds));
    // A failed entry leaves the queue when its 24 hours end: followers hear it then, not at the next change.
    const failedExpiry: DeferredJob = { dueAt: () => this.submissions.nextFailedExpiry(), run: async (now) => this.change(now, nothing, "unlisted") };
    // A pending question expires QUESTION_TTL_HOURS after it was asked: a change of the chat (no longer awaiting), nothing for the agent.
    const questionExpiry: DeferredJob = {
      dueAt: () => this.questions.expiryDue(),
      run: async (now) => {
        if ((this.questions.expiryDue() ?? Number.POSITIVE_INFINITY) <= now) this.change(now, () => this.questions.expire(now));
      },
    };
    const tasks: DeferredJob = { dueAt: () => this.runner.dueAt(), run: () => this.runner.runDue() };
    const jobs = { refunds: this.refunds, tasks, webhookHandOff: handOff, failedExpiry, questionExpiry, chatList: this.listSync };
    this.work = Object.entries(jobs).map(([name, job]) => new BackedOffJob(job, name));
    if (this.store.isInitialised()) this.store.migrate();
    if (this.runner.recoverOrphan(Date.now())) this.reschedule(Date.now());
  }

  /** The chat's row when it exists and belongs to this project; otherwise the caller answers not found. */
  private chatIn(projectId: string): ChatRow | undefined {
    const chat = this.store.isInitialised() ? this.store.chat() : undefined;
    return chat?.project_id === projectId ? chat : undefined;
  }

  async create(chatId: string, projectId: string, title: string): Promise<Chat> {
    this.store.migrate();
    const now = Date.now();
    // A new chat's first version is the one the list will hear of.
    const write = () => {
      if (!this.store.chat()) this.store.insertChat({ id: chatId, project_id: projectId, title, created_at: iso(now) });
    };
    this.change(now, write, "unlisted");
    await this.runJob(this.listSync);
    return this.store.view();
  }

  async get(projectId: string): Promise<{ chat: Chat; eventId: number } | null> {
    return this.chatIn(projectId) ? { chat: this.store.view(), eventId: this.publisher.newestId() } : null;
  }

  async rename(projectId: string, title: string): Promise<Chat | null> {
    if (!this.chatIn(projectId)) return null;
    this.change(Date.now(), () => this.store.rename(title));
    await this.runJob(this.listSync);
    return this.store.view();
  }

  async setArchived(projectId: string, archived: boolean): Promise<Chat | null> {
    const chat = this.chatIn(projectId);
    if (!chat) return null;
    const now = Date.now();
    if (archived !== (chat.archived_at !== null)) this.change(now, () => this.store.setArchivedAt(archived ? iso(now) : null));
    else this.change(now, nothing, "unlisted");
    await this.runJob(this.listSync);
    return this.store.view();
  }

  /**
   * Accepts a message, a steering text or an answer to a question once per idempotency key (one key space
   * for the three). The lookup and the insert share one synchronous stretch. A steering text waits for the
   * task the chat is working on (running, or being dispatched) to take it; on a chat that is not working it
   * is sent like a message. An answer is a message whose text is the answer in words; a send or steer
   * accepted while a question is pending answers it with its text, or supersedes one that takes no text.
   */
  async submit(projectId: string, request: SubmitRequest): Promise<SubmitOutcome> {
    // What a question asks never changes, so an answer's words can be found before the await below.
    const fit = request.kind === "answer" ? this.fitOf(projectId, request.questionId, request.answer) : undefined;
    const content = request.kind === "answer" ? (fit?.fits ? fit.content : "") : request.content;
    // Before anything is decided: from here to the insert nothing awaits.
    const contentHash = await sha256Hex(content);
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    const replyTo = request.kind === "answer" ? null : request.replyToMessageId;
    // Part of the input, so it is refused before the key is looked at (a replay's target was valid, and messages stay).
    if (replyTo && !this.store.hasMessage(replyTo)) return { kind: "unknown_reply_target" };
    const question = request.kind === "answer" ? this.questions.byId(request.questionId) : undefined;
    if (request.kind === "answer" && !question) return { kind: "question_not_found" };
    const answer = request.kind === "answer" ? answerJson(request.answer) : null;
    const existing = this.submissions.byKey(request.idempotencyKey);
    if (existing) {
      // A submission that can no longer run keeps the hash of its text, not the text; an answer is told by its question's stored answer.
      const sameText = existing.content_hash === null ? existing.content === content : existing.content_hash === contentHash;
      const sameAnswer = existing.question_id === question?.id && question?.submission_id === existing.id && question.answer === answer;
      const same = existing.kind === request.kind && existing.reply_to === replyTo && (answer === null ? sameText : sameAnswer);
      if (!same) return { kind: "key_reused" };
      // A cancelled submission must never run, so its key neither replays nor sends it again.
      if (existing.status === "cancelled") return { kind: "cancelled" };
      return { kind: "accepted", replayed: true, submission: { submissionId: existing.id, chatId: chat.id, disposition: existing.disposition } };
    }
    if (chat.archived_at !== null) return { kind: "archived" };
    if (question && question.status !== "pending") return { kind: "question_not_pending", status: question.status };
    if (fit && !fit.fits) return { kind: "answer_does_not_fit", why: fit.why };
    const contentBytes = utf8.encode(content).byteLength;
    const load = this.submissions.load();
    if (load.entries >= QUEUE_MAX_ENTRIES || load.bytes + contentBytes > QUEUE_MAX_BYTES) return { kind: "queue_full" };
    offerMaintenanceFlag(request.seen.maintenance);
    offerProjectState(projectId, request.seen.project);
    const now = Date.now();
    // What isWorking shows: a steer sent then is meant for the reply on its way, even if its task has not started yet.
    const steering = request.kind === "steer" && this.submissions.isWorking();
    const started = !steering && !request.seen.maintenance.value && !this.submissions.hasPendingWork();
    const submission = { submissionId: crypto.randomUUID(), chatId: chat.id, disposition: started ? ("started" as const) : ("queued" as const) };
    this.change(now, () => {
      const { submissionId } = submission;
      // The question it answered (an answer's, or a pending one that takes its text); any other pending question is superseded.
      const answered = request.kind === "answer" ? this.questions.answer(question!, request.answer, submissionId, now) : this.questions.closeBySend(content, submissionId, now);
      this.submissions.insert({
        id: submission.submissionId,
        idempotency_key: request.idempotencyKey,
        kind: request.kind,
        content,
        content_bytes: contentBytes,
        content_hash: contentHash,
        reply_to: replyTo,
        disposition: submission.disposition,
        status: steering ? "steering" : started ? "dispatching" : "queued",
        created_at: iso(now),
        question_id: answered ?? null,
      });
    });
    return { kind: "accepted", replayed: false, submission };
  }

  /** Whether an answer fits the question it names, and its words; undefined when the chat or the question is unknown (found again after the await). */
  private fitOf(projectId: string, questionId: string, answer: Answer): Fit | undefined {
    const chat = this.chatIn(projectId);
    const question = chat ? this.questions.byId(questionId) : undefined;
    return question && fitAnswer(this.questions.view(question, chat!.id), answer);
  }

  /** A question the chat's agent asked, as it stands. */
  async question(projectId: string, questionId: string): Promise<QuestionOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    const row = this.questions.byId(questionId);
    return row ? { kind: "question", question: JSON.stringify(this.questions.view(row, chat.id)) } : { kind: "question_not_found" };
  }

  async messages(projectId: string, cursor: string | undefined, limit: number): Promise<MessagesOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    const before = cursor === undefined ? null : decodeCursor(chat.id, cursor);
    if (before === undefined) return { kind: "bad_cursor" };
    const page = this.store.messagesBefore(before, limit);
    return { kind: "page", items: page.items, nextCursor: page.more && page.lastSeq !== null ? encodeCursor(chat.id, page.lastSeq) : null, eventId: this.publisher.newestId() };
  }

  // Not named "queue": that name is reserved for the Queues handler and is not callable over RPC.
  async queueEntries(projectId: string): Promise<{ items: QueueEntry[]; eventId: number } | null> {
    if (!this.chatIn(projectId)) return null;
    return { items: this.submissions.queue(Date.now()), eventId: this.publisher.newestId() };
  }

  /** What a submission became: its status and the ids of its task and messages. */
  async submissionState(projectId: string, submissionId: string): Promise<SubmissionOutcome> {
    if (!this.chatIn(projectId)) return { kind: "not_found" };
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    const { id, status, task_id: taskId, user_message_id: userMessageId, reply_message_id: replyMessageId, created_at: createdAt } = row;
    // Submissions from before charges were kept here show 0.
    const credits = { charged: row.charged ?? 0, refunded: row.refunded };
    const failure = status === "failed" && row.failure_code ? { code: row.failure_code, message: this.store.errorOf(row.id) ?? "" } : null;
    return { kind: "submission", submission: { id, status, taskId, userMessageId, replyMessageId, createdAt, credits, failure } };
  }

  /** One message of the chat, whatever its role, and the event id it is current to (read in the same synchronous stretch). */
  async message(projectId: string, messageId: string): Promise<MessageRead> {
    if (!this.chatIn(projectId)) return { kind: "not_found" };
    const message = this.store.message(messageId);
    return message ? { kind: "message", message, eventId: this.publisher.newestId() } : { kind: "message_not_found" };
  }

  /**
   * Stops an agent reply: a working one ends at once as interrupted_by_user with what it had written,
   * and the queue moves on; one that has ended is answered as it is, so a retried or late stop is safe.
   */
  async stopReply(projectId: string, messageId: string): Promise<MessageOutcome> {
    if (!this.chatIn(projectId)) return { kind: "not_found" };
    const message = this.store.message(messageId);
    if (message?.role !== "owner") return { kind: "message_not_found" };
    const task = this.store.runningTask();
    if (message.status !== "working" || task?.owner_message_id !== messageId) return { kind: "message", message };
    this.runner.stop(task, Date.now());
    return { kind: "message", message: this.store.message(messageId)! };
  }

  /** Removes a submission that has not started (queued, steering or failed) for good; its key then answers submission_cancelled. */
  async cancelSubmission(projectId: string, submissionId: string): Promise<CancelOutcome> {
    if (!this.chatIn(projectId)) return "not_found";
    const row = this.submissions.byId(submissionId);
    if (!row) return "submission_not_found";
    if (row.status === "cancelled") return "cancelled";
    if (row.status !== "queued" && row.status !== "steering" && row.status !== "failed") return "started";
    // Only queuedCount is part of the summary: the chat list must hear that it went down.
    this.change(Date.now(), () => this.submissions.move(row, "cancelled"), row.status === "queued" ? "listed" : "unlisted");
    return "cancelled";
  }

  /**
   * A live event stream: a snapshot (or, resuming, every kept event after `resumeFrom`), then each
   * event as it is appended. Null when the chat is not in this project.
   */
  async follow(projectId: string, resumeFrom: number | null, grant: StreamGrant): Promise<ReadableStream<Uint8Array> | null> {
    if (!this.chatIn(projectId)) return null;
    const now = Date.now();
    // Failed entries whose 24 hours ended leave the queue as events first, so the log and a snapshot agree;
    // followers hear of the next one when it comes, also for entries that failed before this object woke.
    this.change(now, nothing, "unlisted");
    const { cursor, first } = this.publisher.streamStart(resumeFrom, now);
    return this.streams.open(cursor, first, grant, now);
  }

  /** Keep-alives, age and slow-reader limits, leases and access: every STREAM_PULSE_MS while streams are open; tests call it with a chosen time. */
  async pulseListeners(now = Date.now()): Promise<void> {
    await this.streams.pulse(now);
  }

  /** The number of open streams (for tests and the bench). */
  async listenerCount(): Promise<number> {
    return this.streams.size;
  }

  /** An agent's result for a task: the http adapter's callback, or the end of a model's run in this object. */
  async completeTask(taskId: string, result: AgentResult): Promise<"done" | EndedTask> {
    return this.runner.complete(taskId, result);
  }

  /** An external agent's partial output: appended once per part number, in order, only while the task runs. */
  async appendPartial(taskId: string, seq: number, text: string): Promise<PartialOutcome> {
    return this.runner.appendPartial(taskId, seq, text);
  }

  /** The steering texts an external agent's running task may take next, oldest first. */
  async steeringFor(taskId: string): Promise<SteeringOffer> {
    return this.runner.steeringFor(taskId);
  }

  /** An external agent took these steering texts; each becomes a user message of the task. */
  async acceptSteering(taskId: string, ids: string[]): Promise<SteeringAck> {
    return this.runner.acceptSteering(taskId, ids);
  }

  /** A webhook event's body as receivers get it, `{ type, timestamp, data }`; null when the chat no longer keeps it. */
  async webhookPayload(eventId: string): Promise<string | null> {
    const chat = this.store.isInitialised() ? this.store.chat() : undefined;
    const event = chat ? this.outbox.event(eventId) : undefined;
    return chat && event ? webhookPayload(event, chat, { store: this.store, submissions: this.submissions, questions: this.questions }) : null;
  }

  /** Runs what is due, in order; a job that may go early does when the object would otherwise wake again only for it. */
  override async alarm(): Promise<void> {
    if (!this.store.isInitialised() || !this.store.chat()) return;
    // The alarm that woke this has been used up.
    this.alarmAt = undefined;
    for (const job of this.work) {
      const now = Date.now();
      const due = job.dueAt(now);
      const others = this.work.filter((other) => other !== job).map((other) => other.dueAt(now) ?? Number.POSITIVE_INFINITY);
      if (due === undefined || (due > now && !(job.early && Math.min(...others) > due))) continue;
      await job.run(now, this.store.chat()!.id);
    }
    this.reschedule(Date.now());
  }

  /** One change (see Change): `write` records it; then the chat is touched (when listed), published and the alarm derived again. */
  private change(now: number, write: () => void, listing: Listing = "listed"): void {
    write();
    if (listing === "listed") this.store.touch(now);
    this.publisher.publish(now);
    this.reschedule(now);
  }

  /** Runs a deferred job now (from a request), then derives the alarm again: the job may have failed and be due later. */
  private async runJob(job: DeferredJob): Promise<void> {
    await job.run(Date.now());
    this.reschedule(Date.now());
  }

  /**
   * The one place the alarm is set: for the earliest time anything is due, or none. Alarms keep whole
   * milliseconds: one due at 12.5 is set for 13, since 12, the moment an alarm may just have run at,
   * would count as already run. One that is due already stays as it is set.
   */
  private reschedule(now: number): void {
    if (!this.store.isInitialised() || !this.store.chat()) return;
    const due = Math.min(...this.work.map((job) => job.dueAt(now) ?? Number.POSITIVE_INFINITY));
    const at = Number.isFinite(due) ? Math.ceil(Math.max(due, now)) : null;
    if (at === this.alarmAt || (at !== null && at <= now && this.alarmAt != null && this.alarmAt <= now)) return;
    this.alarmAt = at;
    this.ctx.waitUntil(at === null ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(at));
  }
}
