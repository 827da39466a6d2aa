import { DurableObject } from "cloudflare:workers";
import { taskCallbackUrl } from "../agent/callback-url";
import { agentFor } from "../agent/select";
import type { AgentPort, AgentResult, AgentTask } from "../agent/port";
import { describeForLog } from "../db/errors";
import { config } from "../config";
import type { ChargeOutcome } from "../credits/account-ledger";
import type { Env } from "../env";
import type { Seen } from "../db/read-mostly";
import { offerProjectState, projectState, type ProjectState } from "../projects/access";
import { decodeCursor, encodeCursor } from "./cursor";
import { dispatchDecision } from "./dispatch-hold";
import { EventLog, sseFrame, type ChatEventType } from "./event-log";
import type { StreamGrant } from "./listeners";
import { offerMaintenanceFlag } from "./maintenance";
import { ChatStreams, RETRY_HINT } from "./streams";
import { RoomStorage, type ChatRow, type SubmissionRow, type TaskRow } from "./room-storage";
import type { Chat, Message, QueueEntry, Submission } from "./schemas";

/** What the Worker knew when it took the request: the object keeps it, so a task can run even where D1 cannot be read. */
export type SeenByWorker = { maintenance: Seen<boolean>; project: Seen<ProjectState> };
export type SubmitRequest = { idempotencyKey: string; content: string; replyToMessageId: string | null; seen: SeenByWorker };
export type SubmitOutcome =
  | { kind: "accepted"; submission: Submission; replayed: boolean }
  | { kind: "key_reused" }
  | { kind: "archived" }
  | { kind: "unknown_reply_target" }
  | { kind: "not_found" };
export type MessagesOutcome = { kind: "page"; items: Message[]; nextCursor: string | null } | { kind: "bad_cursor" } | { kind: "not_found" };
export type PartialOutcome = "appended" | "duplicate" | "already_finished" | "out_of_order" | "too_long" | "unknown";

// Maintenance or a suspended project: the next submission is looked at again this often.
const HOLD_RECHECK_MS = 2_000;
// The chat list may lag a busy chat by this much: a burst of sends, or a task's parts, reach it as one update.
const LIST_SYNC_DELAY_MS = 500;
const RETRY_MS = 5_000;
const REPLY_MAX = 100_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One object per chat, the single source of truth for its title, archive state, messages, queue,
 * idempotency keys and running task. Requests only record; the alarm runs tasks one at a time.
 */
export class ChatRoom extends DurableObject<Env> {
  private readonly store: RoomStorage;
  private readonly agent: AgentPort;
  private eventLog: EventLog | undefined;
  // When the chat list first fell behind this object (in memory: after a restart the next alarm sends at once).
  private listBehindSince: number | undefined;
  // The chat and queue as last published, to append an event only when they change.
  private readonly published: Partial<Record<"chat" | "queue", string>> = {};
  // The storage's queue version last published, and when that queue changes by itself: it is rendered again only then.
  private publishedQueue: { version: number; changesAt: number } | undefined;
  // What the running task was asked, kept while it runs (its submission never changes).
  private runningInput: AgentTask | undefined;
  private readonly streams: ChatStreams;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RoomStorage(ctx.storage.sql);
    this.agent = agentFor(config(env));
    if (this.store.isInitialised()) this.store.migrate();
    this.streams = new ChatStreams(ctx, env, { framesAfter: (cursor, max) => this.log.framesAfter(cursor, max) });
  }

  private get log(): EventLog {
    return (this.eventLog ??= new EventLog(this.ctx.storage.sql));
  }

  /** The chat's row when it exists and belongs to this project; otherwise the caller answers not found. */
  private chatIn(projectId: string): ChatRow | undefined {
    const chat = this.store.isInitialised() ? this.store.chat() : undefined;
    return chat?.project_id === projectId ? chat : undefined;
  }

  async create(chatId: string, projectId: string, title: string): Promise<Chat> {
    this.store.migrate();
    if (!this.store.chat()) this.store.insertChat({ id: chatId, project_id: projectId, title, created_at: iso(Date.now()) });
    this.publish();
    await this.syncList();
    return this.store.view();
  }

  async get(projectId: string): Promise<Chat | null> {
    return this.chatIn(projectId) ? this.store.view() : null;
  }

  async rename(projectId: string, title: string): Promise<Chat | null> {
    if (!this.chatIn(projectId)) return null;
    this.store.rename(title, Date.now());
    this.publish();
    await this.syncList();
    return this.store.view();
  }

  async setArchived(projectId: string, archived: boolean): Promise<Chat | null> {
    const chat = this.chatIn(projectId);
    if (!chat) return null;
    if (archived !== (chat.archived_at !== null)) this.store.setArchivedAt(archived ? iso(Date.now()) : null, Date.now());
    this.publish();
    await this.syncList();
    return this.store.view();
  }

  /** Accepts a message once per idempotency key. The lookup and the insert share one synchronous stretch. */
  async submit(projectId: string, request: SubmitRequest): Promise<SubmitOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    const existing = this.store.submissionByKey(request.idempotencyKey);
    if (existing) {
      const same = existing.content === request.content && existing.reply_to === request.replyToMessageId;
      if (!same) return { kind: "key_reused" };
      return { kind: "accepted", replayed: true, submission: { submissionId: existing.id, chatId: chat.id, disposition: existing.disposition } };
    }
    if (chat.archived_at !== null) return { kind: "archived" };
    if (request.replyToMessageId && !this.store.hasMessage(request.replyToMessageId)) return { kind: "unknown_reply_target" };
    offerMaintenanceFlag(request.seen.maintenance);
    offerProjectState(projectId, request.seen.project);
    const now = Date.now();
    const started = !request.seen.maintenance.value && !this.store.hasPendingWork();
    const row = this.store.insertSubmission({
      id: crypto.randomUUID(),
      idempotency_key: request.idempotencyKey,
      content: request.content,
      reply_to: request.replyToMessageId,
      disposition: started ? "started" : "queued",
      status: started ? "dispatching" : "queued",
      created_at: iso(now),
    });
    this.store.touch(now);
    this.store.setAwaitingUser(now, false);
    this.publish(now);
    await this.scheduleAt(started ? now : now + LIST_SYNC_DELAY_MS);
    return { kind: "accepted", replayed: false, submission: { submissionId: row.id, chatId: chat.id, disposition: row.disposition } };
  }

  async messages(projectId: string, cursor: string | undefined, limit: number): Promise<MessagesOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    const before = cursor === undefined ? null : decodeCursor(chat.id, cursor);
    if (before === undefined) return { kind: "bad_cursor" };
    const page = this.store.messagesBefore(before, limit);
    return { kind: "page", items: page.items, nextCursor: page.more && page.lastSeq !== null ? encodeCursor(chat.id, page.lastSeq) : null };
  }

  // Not named "queue": that name is reserved for the Queues handler and is not callable over RPC.
  async queueEntries(projectId: string): Promise<QueueEntry[] | null> {
    return this.chatIn(projectId) ? this.store.queue(Date.now()).items : null;
  }

  /**
   * A live event stream: a snapshot (or, resuming, every kept event after `resumeFrom`), then each
   * event as it is appended. Null when the chat is not in this project.
   */
  async follow(projectId: string, resumeFrom: number | null, grant: StreamGrant): Promise<ReadableStream<Uint8Array> | null> {
    if (!this.chatIn(projectId)) return null;
    const now = Date.now();
    const first = [RETRY_HINT];
    let cursor: number;
    if (resumeFrom !== null && this.log.canResumeFrom(resumeFrom)) {
      cursor = resumeFrom;
    } else {
      // Read in the same synchronous stretch as the state, so resuming from the snapshot's id misses nothing.
      cursor = this.log.newestId();
      first.push(sseFrame(cursor, "snapshot", JSON.stringify({ chat: this.store.view(), queue: { items: this.store.queue(now).items } })));
    }
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

  /** An external agent's result for a task (the http adapter's callback). */
  async completeTask(taskId: string, result: AgentResult): Promise<"done" | "already_finished" | "unknown"> {
    if (!this.store.isInitialised()) return "unknown";
    const task = this.store.runningTask();
    if (!task || task.id !== taskId) return this.store.submissionOfTask(taskId) ? "already_finished" : "unknown";
    await this.finishTask(task, result);
    await this.scheduleAt(Date.now());
    return "done";
  }

  /** An external agent's partial output: appended once per part number, in order, only while the task runs. */
  async appendPartial(taskId: string, seq: number, text: string): Promise<PartialOutcome> {
    if (!this.store.isInitialised()) return "unknown";
    const task = this.store.runningTask();
    if (!task || task.id !== taskId) return this.store.submissionOfTask(taskId) ? "already_finished" : "unknown";
    if (seq <= task.partials) return "duplicate";
    if (seq > task.partials + 1) return "out_of_order";
    if (this.store.replyLength(task.owner_message_id) + text.length > REPLY_MAX) return "too_long";
    this.store.setTaskPartials(task.id, seq);
    this.appendToReply(task, text, Date.now());
    return "appended";
  }

  override async alarm(): Promise<void> {
    if (!this.store.isInitialised() || !this.store.chat()) return;
    try {
      await this.runDueWork();
    } catch (error) {
      // The runtime drops an alarm that keeps throwing, which would stall the queue: log it and look again later.
      console.error(JSON.stringify({ level: "error", event: "chat_alarm_failed", chatId: this.store.chat()!.id, error: describeForLog(error) }));
      await this.scheduleAt(Date.now() + RETRY_MS);
    }
    await this.syncListSoon();
  }

  /** Finishes what is due, then dispatches queued submissions in order, one task at a time. */
  private async runDueWork(): Promise<void> {
    await this.payRefunds();
    for (let step = 0; step < 100; step++) {
      const now = Date.now();
      const task = this.store.runningTask();
      if (task) {
        if (task.check_at > now) return this.scheduleAt(task.check_at);
        const written = this.store.replyLength(task.owner_message_id);
        const result = this.agent.check(this.inputOf(task), task.started_at, now, written);
        if ("checkAt" in result) {
          this.store.setTaskCheckAt(task.id, result.checkAt);
          if (result.append) this.appendToReply(task, result.append, now);
        } else {
          await this.finishTask(task, result);
        }
        continue;
      }
      const next = this.store.nextSubmission();
      if (!next) return;
      if (!next.task_id || !next.account_id) {
        const decision = await dispatchDecision(this.env.DB, this.store.chat()!.project_id);
        if (decision.kind !== "go") {
          // Maintenance, a suspended project, or D1 unable to say: the submission waits and is looked at again shortly.
          if (next.status === "dispatching" && !next.task_id) {
            this.store.setSubmission(next, "queued");
            // The summary changed (no longer working, one more queued), so the chat list must hear of it.
            this.store.touch(now);
            this.publish(now);
          }
          return this.scheduleAt(now + (decision.kind === "hold" ? HOLD_RECHECK_MS : RETRY_MS));
        }
        // The task id and the paying account are stored before credits are taken, so a restart retries the same idempotent charge.
        const assigned = { task_id: next.task_id ?? crypto.randomUUID(), account_id: decision.ownerAccountId };
        this.store.setSubmission(next, "dispatching", assigned);
        Object.assign(next, { status: "dispatching", ...assigned });
        this.store.touch(now);
        this.publish(now);
      }
      if (!(await this.dispatch(next))) return this.scheduleAt(Date.now() + RETRY_MS);
    }
    // The step budget ran out with work left (many entries that each end at once): go on in the next alarm.
    await this.scheduleAt(Date.now());
  }

  /** Charges and starts one submission's task. False when the owner's ledger could not be reached (retry later). */
  private async dispatch(submission: SubmissionRow): Promise<boolean> {
    const taskId = submission.task_id!;
    const accountId = submission.account_id!;
    let charged: ChargeOutcome;
    try {
      charged = await this.env.ACCOUNT_LEDGER.getByName(accountId).charge(accountId, taskId, config(this.env).taskCreditCost);
    } catch (error) {
      console.warn(JSON.stringify({ level: "warn", event: "charge_failed", chatId: this.store.chat()!.id, error: describeForLog(error) }));
      return false;
    }
    const now = Date.now();
    if (charged === "insufficient") {
      this.store.setSubmission(submission, "failed", { failed_at: now });
      this.addMessage(
        {
          id: crypto.randomUUID(),
          role: "error",
          content: "Not enough credits to run this task. Top up the project owner's balance and send the message again.",
          createdAt: iso(now),
          status: null,
          taskId,
        },
        now,
      );
      this.store.touch(now);
      this.publish(now);
      return true;
    }
    const task: TaskRow = { id: taskId, submission_id: submission.id, owner_message_id: crypto.randomUUID(), started_at: now, check_at: now, partials: 0 };
    this.addMessage({ id: crypto.randomUUID(), role: "user", content: submission.content, createdAt: iso(now), status: null, taskId: null }, now);
    this.addMessage({ id: task.owner_message_id, role: "owner", content: "", createdAt: iso(now), status: "working", taskId }, now);
    this.store.setSubmission(submission, "running");
    this.store.insertTask(task);
    this.store.touch(now);
    this.publish(now);
    // The chat list hears of the start with the task's parts, from the alarm (syncListSoon).
    try {
      const start = await this.agent.start(this.agentTask(submission, taskId), now);
      if (start.kind === "finished") await this.finishTask(task, start.result);
      else this.store.setTaskCheckAt(taskId, start.checkAt);
    } catch (error) {
      await this.finishTask(task, { status: "failed", content: "", error: `The agent could not take the task: ${String((error as Error)?.message ?? error).slice(0, 300)}` });
    }
    return true;
  }

  /** Records a task's end: the reply, a visible error on failure (credits given back), the queue moves on. */
  private async finishTask(task: TaskRow, result: AgentResult): Promise<void> {
    if (this.store.runningTask()?.id !== task.id) return;
    const now = Date.now();
    // The result is authoritative; when it extends what was streamed, the rest goes out as a last delta.
    const reply = this.store.message(task.owner_message_id)!;
    const written = reply.content;
    if (result.content.length > written.length && result.content.startsWith(written)) {
      this.appendEvent("message.delta", { id: task.owner_message_id, text: result.content.slice(written.length) }, now);
    }
    this.store.finishMessage(task.owner_message_id, result.status, result.content);
    this.appendEvent("message", { ...reply, status: result.status, content: result.content }, now);
    if (result.status === "failed") {
      const detail = result.error ?? "The agent could not complete this task.";
      this.addMessage({ id: crypto.randomUUID(), role: "error", content: `${detail} Its credits were returned.`, createdAt: iso(now), status: null, taskId: task.id }, now);
      this.store.owesRefund(task.id, this.store.submission(task.submission_id)?.account_id ?? null);
    }
    // A task runs for a submission in status running (both are written in one synchronous stretch).
    this.store.setSubmission({ id: task.submission_id, status: "running" }, "done");
    this.store.deleteTask(task.id);
    this.store.touch(now);
    this.store.setAwaitingUser(now, result.status === "success" && result.awaitingUser === true);
    this.publish(now);
    await this.payRefunds();
  }

  private appendToReply(task: TaskRow, text: string, now: number): void {
    this.store.appendToMessage(task.owner_message_id, text);
    this.appendEvent("message.delta", { id: task.owner_message_id, text }, now);
    this.publish(now);
  }

  private addMessage(message: Message, now: number): void {
    this.store.insertMessage(message);
    this.appendEvent("message", message, now);
  }

  private appendEvent(type: ChatEventType, data: unknown, now: number): void {
    this.log.append(type, JSON.stringify(data), now);
  }

  /**
   * Appends chat and queue events for whatever changed since they were last published, and wakes
   * the listeners. Called after every change, before the next await, so the log never lags storage.
   */
  private publish(now = Date.now()): void {
    this.publishState("chat", this.store.view(), now);
    // The queue is rendered only when a submission moved or a failed entry's 24 hours ran out.
    if (this.store.queueVersion !== this.publishedQueue?.version || now >= this.publishedQueue.changesAt) {
      const { items, changesAt } = this.store.queue(now);
      this.publishedQueue = { version: this.store.queueVersion, changesAt };
      this.publishState("queue", { items }, now);
    }
    this.streams.wake();
  }

  private publishState(type: "chat" | "queue", state: unknown, now: number): void {
    const json = JSON.stringify(state);
    if (json === (this.published[type] ??= this.log.lastData(type))) return;
    this.log.append(type, json, now);
    this.published[type] = json;
  }

  /** Gives failed tasks' credits back through the paying account's ledger (idempotent); on failure the alarm tries again. */
  private async payRefunds(): Promise<void> {
    for (const refund of this.store.pendingRefunds()) {
      try {
        // Only a task charged before ledgers existed has no account recorded: its payer was the project's owner.
        const accountId = refund.account_id ?? (await projectState(this.env.DB, this.store.chat()!.project_id)).value?.ownerAccountId;
        if (accountId) await this.env.ACCOUNT_LEDGER.getByName(accountId).refund(accountId, refund.task_id);
        this.store.refunded(refund.task_id);
      } catch (error) {
        console.warn(JSON.stringify({ level: "warn", event: "refund_failed", chatId: this.store.chat()!.id, error: describeForLog(error) }));
        await this.scheduleAt(Date.now() + RETRY_MS);
        return;
      }
    }
  }

  /** From the alarm: sends the summary now, unless an alarm that comes before the list lags LIST_SYNC_DELAY_MS will. */
  private async syncListSoon(): Promise<void> {
    const chat = this.store.chat();
    if (!chat || chat.indexed_version >= chat.version) return;
    const now = Date.now();
    this.listBehindSince ??= now;
    const syncBy = this.listBehindSince + LIST_SYNC_DELAY_MS;
    const next = await this.ctx.storage.getAlarm();
    if (now < syncBy && next !== null && next <= syncBy) return;
    await this.syncList();
  }

  /** Sends the summary to the project's chat list (newer versions win there); on failure the alarm tries again, nothing is lost. */
  private async syncList(): Promise<void> {
    const chat = this.store.chat();
    if (!chat || chat.indexed_version >= chat.version) return;
    try {
      await this.env.PROJECT_CHATS.getByName(chat.project_id).upsert(chat.project_id, this.store.view(), chat.version);
      this.store.markListed(chat.version);
      if (this.store.chat()!.version <= chat.version) this.listBehindSince = undefined;
    } catch (error) {
      console.warn(JSON.stringify({ level: "warn", event: "chat_list_update_failed", chatId: chat.id, error: describeForLog(error) }));
      await this.scheduleAt(Date.now() + RETRY_MS);
    }
  }

  private async scheduleAt(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  private inputOf(task: TaskRow): AgentTask {
    if (this.runningInput?.taskId !== task.id) this.runningInput = this.agentTask(this.store.submission(task.submission_id)!, task.id);
    return this.runningInput;
  }

  private agentTask(submission: SubmissionRow, taskId: string): AgentTask {
    const chat = this.store.chat()!;
    return {
      taskId,
      chatId: chat.id,
      projectId: chat.project_id,
      content: submission.content,
      replyToMessageId: submission.reply_to,
      callbackUrl: taskCallbackUrl(config(this.env).publicOrigin, chat.id, taskId),
    };
  }
}
