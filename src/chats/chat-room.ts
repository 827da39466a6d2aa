import { DurableObject } from "cloudflare:workers";
import { taskCallbackUrl } from "../agent/callback-url";
import { agentFor } from "../agent/select";
import { withQuote } from "../agent/conversation";
import type { AgentPort, AgentResult, AgentTask, LiveTask, TaskStep } from "../agent/port";
import { describeForLog } from "../db/errors";
import { config } from "../config";
import type { ChargeOutcome } from "../credits/account-ledger";
import type { Env } from "../env";
import type { Seen } from "../db/read-mostly";
import { offerProjectState, projectState, type ProjectState } from "../projects/access";
import { decodeCursor, encodeCursor } from "./cursor";
import { dispatchDecision } from "./dispatch-hold";
import { EventLog, REPLAY_MAX_BYTES, sseFrame, type ChatEventType } from "./event-log";
import type { StreamGrant } from "./listeners";
import { offerMaintenanceFlag } from "./maintenance";
import { ChatStreams, RETRY_HINT } from "./streams";
import { RoomStorage, type ChatRow, type SubmissionKind, type SubmissionRow, type TaskRow } from "./room-storage";
import { entryOf } from "./submission-storage";
import { WebhookOutbox } from "./webhook-outbox";
import type { WebhookTask } from "../webhooks/delivery";
import type { Chat, Message, QueueEntry, Submission, SubmissionState } from "./schemas";
import { withinUnits } from "../text";

/** What the Worker knew when it took the request: the object keeps it, so a task can run even where D1 cannot be read. */
export type SeenByWorker = { maintenance: Seen<boolean>; project: Seen<ProjectState> };
export type SubmitRequest = { kind: SubmissionKind; idempotencyKey: string; content: string; replyToMessageId: string | null; seen: SeenByWorker };
export type SubmitOutcome =
  | { kind: "accepted"; submission: Submission; replayed: boolean }
  | { kind: "key_reused" }
  | { kind: "cancelled" }
  | { kind: "archived" }
  | { kind: "unknown_reply_target" }
  | { kind: "queue_full" }
  | { kind: "not_found" };
/** eventId: the newest event whose effects the answer shows (read in the same synchronous stretch), for Chat-Event-Id. */
export type MessagesOutcome = { kind: "page"; items: Message[]; nextCursor: string | null; eventId: number } | { kind: "bad_cursor" } | { kind: "not_found" };
export type StopOutcome = { kind: "reply"; message: Message } | { kind: "message_not_found" } | { kind: "not_found" };
export type CancelOutcome = "cancelled" | "started" | "submission_not_found" | "not_found";
export type SubmissionOutcome = { kind: "submission"; submission: SubmissionState } | { kind: "submission_not_found" } | { kind: "not_found" };
/** A task that is not running, as an external agent's late call finds it. */
type EndedTask = "stopped" | "already_finished" | "unknown";
export type PartialOutcome = "appended" | "duplicate" | "out_of_order" | "too_long" | EndedTask;
export type SteeringItem = { id: string; content: string; replyToMessageId: string | null; createdAt: string };
export type SteeringOffer = { kind: "offer"; items: SteeringItem[] } | { kind: EndedTask };
export type SteeringAck = { kind: "taken" } | { kind: "refused"; id: string } | { kind: EndedTask };

// The queue bound: entries that wait or are being dispatched, and the UTF-8 bytes of their content.
export const QUEUE_MAX_ENTRIES = 100;
export const QUEUE_MAX_BYTES = 1_000_000;
// Each steering text a model takes is another paid call: a task takes at most this many; later ones run as tasks of their own.
export const STEERING_PER_TASK = 5;
const utf8 = new TextEncoder();

// Maintenance or a suspended project: the next submission is looked at again this often.
const HOLD_RECHECK_MS = 2_000;
// The chat list may lag a busy chat by this much: a burst of sends, or a task's parts, reach it as one update.
const LIST_SYNC_DELAY_MS = 500;
const RETRY_MS = 5_000;
// One alarm takes at most this many steps (dispatches, checks, ends); the rest goes on in the next alarm.
export const ALARM_STEPS = 50;
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
  // The chat as last published, to append an event only when it changes.
  private publishedChat: string | undefined;
  // The snapshot at the newest event id, encoded once for every stream that opens before the next change.
  private snapshot: { id: number; frame: Uint8Array } | undefined;
  // What the running task was asked, kept while it runs (its submission never changes).
  private runningInput: AgentTask | undefined;
  private readonly streams: ChatStreams;
  private readonly outbox: WebhookOutbox;
  // The hand-off of webhook events under way, so two never run at once.
  private handingOff: Promise<void> | undefined;
  // After a failed hand-off, changes do not start another before this time (the alarm does).
  private handOffPausedUntil = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RoomStorage(ctx.storage.sql);
    this.outbox = new WebhookOutbox(ctx.storage.sql);
    this.agent = agentFor(config(env), { ai: env.AI, keepAlive: (work) => ctx.waitUntil(work) });
    if (this.store.isInitialised()) this.store.migrate();
    // A model task runs in the memory of the object that started it: one found running here lost its call, and fails now.
    const orphan = this.agent.live && this.store.isInitialised() ? this.store.runningTask() : undefined;
    if (orphan) {
      this.store.setTaskCheckAt(orphan.id, Date.now());
      ctx.waitUntil(ctx.storage.setAlarm(Date.now()));
    }
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

  async get(projectId: string): Promise<{ chat: Chat; eventId: number } | null> {
    return this.chatIn(projectId) ? { chat: this.store.view(), eventId: this.log.newestId() } : null;
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

  /**
   * Accepts a message (or a steering text) once per idempotency key. The lookup and the insert share
   * one synchronous stretch. A steering text waits for the task the chat is working on (running, or
   * being dispatched) to take it; on a chat that is not working it is sent like a message.
   */
  async submit(projectId: string, request: SubmitRequest): Promise<SubmitOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return { kind: "not_found" };
    // Part of the input, so it is refused before the key is looked at (a replay's target was valid, and messages stay).
    if (request.replyToMessageId && !this.store.hasMessage(request.replyToMessageId)) return { kind: "unknown_reply_target" };
    const existing = this.store.submissions.byKey(request.idempotencyKey);
    if (existing) {
      const same = existing.kind === request.kind && existing.content === request.content && existing.reply_to === request.replyToMessageId;
      if (!same) return { kind: "key_reused" };
      // A cancelled submission must never run, so its key neither replays nor sends it again.
      if (existing.status === "cancelled") return { kind: "cancelled" };
      return { kind: "accepted", replayed: true, submission: { submissionId: existing.id, chatId: chat.id, disposition: existing.disposition } };
    }
    if (chat.archived_at !== null) return { kind: "archived" };
    const contentBytes = utf8.encode(request.content).byteLength;
    const load = this.store.submissions.load();
    if (load.entries >= QUEUE_MAX_ENTRIES || load.bytes + contentBytes > QUEUE_MAX_BYTES) return { kind: "queue_full" };
    offerMaintenanceFlag(request.seen.maintenance);
    offerProjectState(projectId, request.seen.project);
    const now = Date.now();
    // What isWorking shows: a steer sent then is meant for the reply on its way, even if its task has not started yet.
    const steering = request.kind === "steer" && this.store.submissions.isWorking();
    const started = !steering && !request.seen.maintenance.value && !this.store.submissions.hasPendingWork();
    const row = this.store.submissions.insert({
      id: crypto.randomUUID(),
      idempotency_key: request.idempotencyKey,
      kind: request.kind,
      content: request.content,
      content_bytes: contentBytes,
      reply_to: request.replyToMessageId,
      disposition: started ? "started" : "queued",
      status: steering ? "steering" : started ? "dispatching" : "queued",
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
    return { kind: "page", items: page.items, nextCursor: page.more && page.lastSeq !== null ? encodeCursor(chat.id, page.lastSeq) : null, eventId: this.log.newestId() };
  }

  // Not named "queue": that name is reserved for the Queues handler and is not callable over RPC.
  async queueEntries(projectId: string): Promise<{ items: QueueEntry[]; eventId: number } | null> {
    if (!this.chatIn(projectId)) return null;
    return { items: this.store.submissions.queue(Date.now()), eventId: this.log.newestId() };
  }

  /** What a submission became: its status and the ids of its task and messages. */
  async submissionState(projectId: string, submissionId: string): Promise<SubmissionOutcome> {
    if (!this.chatIn(projectId)) return { kind: "not_found" };
    const row = this.store.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    return {
      kind: "submission",
      submission: {
        id: row.id,
        status: row.status,
        taskId: row.task_id,
        userMessageId: row.user_message_id,
        replyMessageId: row.reply_message_id,
        createdAt: row.created_at,
      },
    };
  }

  /**
   * Stops an agent reply: a working one ends at once as interrupted_by_user with what it had written,
   * and the queue moves on; one that has ended is answered as it is, so a retried or late stop is safe.
   */
  async stopReply(projectId: string, messageId: string): Promise<StopOutcome> {
    if (!this.chatIn(projectId)) return { kind: "not_found" };
    const message = this.store.message(messageId);
    if (message?.role !== "owner") return { kind: "message_not_found" };
    const task = this.store.runningTask();
    if (message.status !== "working" || task?.owner_message_id !== messageId) return { kind: "reply", message };
    const input = this.inputOf(task);
    const now = Date.now();
    this.endTask(task, { status: "interrupted_by_user" }, now);
    // Telling the agent is best effort and must not hold up the answer; its later output is refused.
    this.ctx.waitUntil(this.agent.stop(input));
    await this.scheduleAt(now);
    return { kind: "reply", message: this.store.message(messageId)! };
  }

  /** Removes a submission that has not started (queued, steering or failed) for good; its key then answers submission_cancelled. */
  async cancelSubmission(projectId: string, submissionId: string): Promise<CancelOutcome> {
    if (!this.chatIn(projectId)) return "not_found";
    const row = this.store.submissions.byId(submissionId);
    if (!row) return "submission_not_found";
    if (row.status === "cancelled") return "cancelled";
    if (row.status !== "queued" && row.status !== "steering" && row.status !== "failed") return "started";
    const now = Date.now();
    this.store.submissions.move(row, "cancelled");
    // queuedCount is part of the summary: the chat list must hear that it went down.
    if (row.status === "queued") this.store.touch(now);
    this.publish(now);
    if (row.status === "queued") await this.scheduleAt(now + LIST_SYNC_DELAY_MS);
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
    await this.publishUntilNextExpiry(now);
    const first = [RETRY_HINT];
    let cursor: number;
    if (resumeFrom !== null && this.log.canResumeFrom(resumeFrom, REPLAY_MAX_BYTES)) {
      cursor = resumeFrom;
    } else {
      // Read in the same synchronous stretch as the state, so resuming from the snapshot's id misses nothing.
      cursor = this.log.newestId();
      first.push(this.snapshotAt(cursor, now));
    }
    return this.streams.open(cursor, first, grant, now);
  }

  /** The snapshot frame at an event id; every change appends an event, so one id has one snapshot. */
  private snapshotAt(id: number, now: number): Uint8Array {
    if (this.snapshot?.id !== id) {
      const state = { chat: this.store.view(), queue: { items: this.store.submissions.queue(now) } };
      this.snapshot = { id, frame: sseFrame(id, "snapshot", JSON.stringify(state)) };
    }
    return this.snapshot.frame;
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
    const task = this.runningTaskNamed(taskId);
    if (!task) return this.endedTask(taskId);
    await this.finishTask(task, result);
    await this.scheduleAt(Date.now());
    return "done";
  }

  /** An external agent's partial output: appended once per part number, in order, only while the task runs. */
  async appendPartial(taskId: string, seq: number, text: string): Promise<PartialOutcome> {
    const task = this.runningTaskNamed(taskId);
    if (!task) return this.endedTask(taskId);
    if (seq <= task.partials) return "duplicate";
    if (seq > task.partials + 1) return "out_of_order";
    if (this.store.replyLength(task.owner_message_id) + text.length > REPLY_MAX) return "too_long";
    this.store.setTaskPartials(task.id, seq);
    this.appendToReply(task, text, Date.now());
    return "appended";
  }

  /** The steering texts an external agent's running task may take next, oldest first. */
  async steeringFor(taskId: string): Promise<SteeringOffer> {
    const task = this.runningTaskNamed(taskId);
    if (!task) return { kind: this.endedTask(taskId) };
    const items = this.steeringOffer(task).map((r) => ({ id: r.id, content: r.content, replyToMessageId: r.reply_to, createdAt: r.created_at }));
    return { kind: "offer", items };
  }

  /**
   * An external agent took these steering texts (at least once: a repeated acknowledgement is fine).
   * Those not taken yet must be the first ones offered, in order; each becomes a user message of the task.
   */
  async acceptSteering(taskId: string, ids: string[]): Promise<SteeringAck> {
    if (!this.store.isInitialised()) return { kind: "unknown" };
    const task = this.runningTaskNamed(taskId);
    const own = task?.submission_id ?? this.store.submissions.ofTask(taskId)?.id;
    if (!own) return { kind: "unknown" };
    const takenByTask = (id: string) => {
      const row = this.store.submissions.byId(id);
      return row?.task_id === taskId && row.id !== own && row.status === "done";
    };
    if (!task) return ids.every(takenByTask) ? { kind: "taken" } : { kind: this.endedTask(taskId) };
    // In order: each id not taken yet must be the next one offered; those before a refused one are taken.
    const offer = this.steeringOffer(task);
    const take: SubmissionRow[] = [];
    let refused: string | undefined;
    for (const id of ids) {
      if (take.some((row) => row.id === id) || takenByTask(id)) continue;
      const next = offer[take.length];
      if (next?.id !== id) {
        refused = id;
        break;
      }
      take.push(next);
    }
    this.takeSteering(task, take, Date.now());
    return refused ? { kind: "refused", id: refused } : { kind: "taken" };
  }

  override async alarm(): Promise<void> {
    if (!this.store.isInitialised() || !this.store.chat()) return;
    try {
      await this.runDueWork();
      // In the background: the queue or the project's webhooks being slow never holds up the chat's next step.
      if (this.outbox.hasWaiting()) this.ctx.waitUntil(this.handOffWebhooks());
      // A failed entry leaves the queue when its 24 hours end: followers hear it then, not at the next change.
      await this.publishUntilNextExpiry(Date.now());
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
    for (let step = 0; step < ALARM_STEPS; step++) {
      const now = Date.now();
      const task = this.store.runningTask();
      if (task) {
        if (task.check_at > now) return this.scheduleAt(task.check_at);
        const taskStep: TaskStep = {
          startedAt: task.started_at,
          now,
          written: this.store.replyLength(task.owner_message_id),
          takeSteering: () => {
            this.takeSteering(task, this.steeringOffer(task), now);
            return this.store.steeringTaken(task);
          },
        };
        const result = this.agent.check(this.inputOf(task), taskStep);
        if ("checkAt" in result && now >= this.deadlineOf(task)) {
          // AGENT_TIMEOUT_SECONDS, for every agent: whatever still works on the task is dropped.
          this.agent.abandon?.(this.inputOf(task));
          const seconds = Math.round(config(this.env).agent.timeoutMs / 1000);
          await this.finishTask(task, { status: "failed", content: "", error: `The agent did not finish within ${seconds} s.` });
        } else if ("checkAt" in result) {
          this.store.setTaskCheckAt(task.id, Math.min(result.checkAt, this.deadlineOf(task)));
          if (result.append) this.appendToReply(task, result.append, now);
        } else {
          await this.finishTask(task, result);
        }
        continue;
      }
      const next = this.store.submissions.next();
      if (!next) return;
      if (!next.task_id || !next.account_id) {
        const decision = await dispatchDecision(this.env.DB, this.store.chat()!.project_id);
        // A queued entry may have been cancelled while D1 was asked (a started one cannot be).
        if (next.status === "queued" && this.store.submissions.byId(next.id)?.status !== "queued") continue;
        if (decision.kind !== "go") {
          // Maintenance, a suspended project, or D1 unable to say: the submission waits and is looked at again shortly.
          if (next.status === "dispatching" && !next.task_id) {
            this.store.submissions.move(next, "queued");
            // Nothing is working now, so steering texts meant for it wait as messages of their own.
            this.store.submissions.requeueSteering();
            // The summary changed (no longer working, one more queued), so the chat list must hear of it.
            this.store.touch(now);
            this.publish(now);
          }
          return this.scheduleAt(now + (decision.kind === "hold" ? HOLD_RECHECK_MS : RETRY_MS));
        }
        // The task id and the paying account are stored before credits are taken, so a restart retries the same idempotent charge.
        const assigned = { task_id: next.task_id ?? crypto.randomUUID(), account_id: decision.ownerAccountId };
        this.store.submissions.move(next, "dispatching", assigned);
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
      this.store.submissions.move(submission, "failed", { failed_at: now });
      this.outbox.record("submission.failed", submission.id, now);
      this.store.submissions.requeueSteering();
      this.addMessage(
        {
          id: crypto.randomUUID(),
          role: "error",
          content: "Not enough credits to run this task. Top up the project owner's balance and send the message again.",
          createdAt: iso(now),
          status: null,
          taskId,
          submissionId: submission.id,
        },
        now,
      );
      this.store.touch(now);
      this.publish(now);
      return true;
    }
    const task: TaskRow = { id: taskId, submission_id: submission.id, owner_message_id: crypto.randomUUID(), started_at: now, check_at: now, partials: 0 };
    const userMessageId = crypto.randomUUID();
    const ofTask = { createdAt: iso(now), taskId, submissionId: submission.id };
    this.addMessage({ id: userMessageId, role: "user", content: submission.content, status: null, ...ofTask }, now);
    this.addMessage({ id: task.owner_message_id, role: "owner", content: "", status: "working", ...ofTask }, now);
    this.store.submissions.move(submission, "running", { user_message_id: userMessageId, reply_message_id: task.owner_message_id });
    this.store.insertTask(task);
    this.store.touch(now);
    this.publish(now);
    // The chat list hears of the start with the task's parts, from the alarm (syncListSoon).
    try {
      const start = await this.agent.start(this.agentTask(submission, taskId), now, this.liveTask(task));
      if (start.kind === "finished") await this.finishTask(task, start.result);
      else if (this.store.runningTask()?.id === taskId) this.store.setTaskCheckAt(taskId, Math.min(start.checkAt, this.deadlineOf(task)));
    } catch (error) {
      await this.finishTask(task, { status: "failed", content: "", error: `The agent could not take the task: ${String((error as Error)?.message ?? error).slice(0, 300)}` });
    }
    return true;
  }

  /** Records an agent's result for the running task, then pays back a failed task's credits. */
  private async finishTask(task: TaskRow, result: AgentResult): Promise<void> {
    if (this.store.runningTask()?.id !== task.id) return;
    this.endTask(task, result, Date.now());
    await this.payRefunds();
  }

  /**
   * Records a task's end in one synchronous stretch: the reply's status and content (what was written
   * when none is given), a visible error on failure (credits owed back), steering texts it did not
   * take back in the queue, and the chat no longer working.
   */
  private endTask(task: TaskRow, end: { status: "success" | "failed" | "interrupted_by_user"; content?: string; error?: string; awaitingUser?: boolean }, now: number): void {
    const reply = this.store.message(task.owner_message_id)!;
    const content = end.content ?? reply.content;
    // The result is authoritative; when it extends what was streamed, the rest goes out as a last delta.
    if (content.length > reply.content.length && content.startsWith(reply.content)) {
      this.appendEvent("message.delta", { id: task.owner_message_id, text: content.slice(reply.content.length) }, now);
    }
    this.store.finishMessage(task.owner_message_id, end.status, content);
    this.appendEvent("message", { ...reply, status: end.status, content }, now);
    if (end.status === "failed") {
      const detail = end.error ?? "The agent could not complete this task.";
      const error = `${detail} Its credits were returned.`;
      this.addMessage({ id: crypto.randomUUID(), role: "error", content: error, createdAt: iso(now), status: null, taskId: task.id, submissionId: task.submission_id }, now);
      this.store.owesRefund(task.id, this.store.submissions.byId(task.submission_id)?.account_id ?? null);
    }
    this.store.submissions.finishRunning(task.submission_id);
    this.store.deleteTask(task.id);
    this.store.submissions.requeueSteering();
    this.store.touch(now);
    const wasAwaiting = this.store.chat()!.awaiting_user === 1;
    this.store.setAwaitingUser(now, end.status === "success" && end.awaitingUser === true);
    this.outbox.record("message.completed", task.owner_message_id, now);
    if (!wasAwaiting && this.store.chat()!.awaiting_user === 1) this.outbox.record("chat.awaiting_user", JSON.stringify(this.store.view()), now);
    this.publish(now);
  }

  /** The steering entries the running task may take now: the oldest waiting, within its cap. */
  private steeringOffer(task: TaskRow): SubmissionRow[] {
    return this.store.submissions.steeringWaiting(STEERING_PER_TASK - this.store.steeringTaken(task).length);
  }

  /** The running task takes these steering entries: each leaves the queue and becomes a user message of the task, free of charge. */
  private takeSteering(task: TaskRow, rows: SubmissionRow[], now: number): void {
    if (rows.length === 0) return;
    for (const row of rows) {
      const messageId = crypto.randomUUID();
      this.store.takeSteering(row, task, messageId);
      this.addMessage({ id: messageId, role: "user", content: row.content, createdAt: iso(now), status: null, taskId: task.id, submissionId: row.id }, now);
    }
    this.store.touch(now);
    this.publish(now);
  }

  /** The running task, when it is the one named. */
  private runningTaskNamed(taskId: string): TaskRow | undefined {
    const task = this.store.isInitialised() ? this.store.runningTask() : undefined;
    return task?.id === taskId ? task : undefined;
  }

  /** Why a task is not running: the user stopped it, it ended otherwise, or this chat never had it. */
  private endedTask(taskId: string): EndedTask {
    const submission = this.store.isInitialised() ? this.store.submissions.ofTask(taskId) : undefined;
    if (!submission) return "unknown";
    const reply = submission.reply_message_id ? this.store.message(submission.reply_message_id) : undefined;
    return reply?.status === "interrupted_by_user" ? "stopped" : "already_finished";
  }

  private appendToReply(task: TaskRow, text: string, now: number): void {
    this.store.appendToMessage(task.owner_message_id, text);
    this.appendEvent("message.delta", { id: task.owner_message_id, text }, now);
    this.publish(now);
  }

  private addMessage(message: Message, now: number): void {
    this.store.insertMessage(message);
    // In the history's key order, whatever the caller's, so an event and a page of messages read alike.
    const { id, role, content, createdAt, status, taskId, submissionId } = message;
    this.appendEvent("message", { id, role, content, createdAt, status, taskId, submissionId }, now);
  }

  private appendEvent(type: ChatEventType, data: unknown, now: number): void {
    this.log.append(type, JSON.stringify(data), now);
  }

  /**
   * Appends the queue's changes (an entry that joined or changed, one that left) and the chat, if it
   * changed, to the log, and wakes the listeners. Called after every change, before the next await,
   * so the log never lags storage; what it appends is the size of what changed, never the whole queue.
   */
  private publish(now = Date.now()): void {
    if (now >= this.handOffPausedUntil && this.outbox.hasWaiting()) this.ctx.waitUntil(this.handOffWebhooks());
    this.store.submissions.expireFailed(now);
    const chat = JSON.stringify(this.store.view());
    if (chat !== (this.publishedChat ??= this.log.lastData("chat"))) {
      this.log.append("chat", chat, now);
      this.publishedChat = chat;
    }
    for (const change of this.store.submissions.takeChanges()) {
      if ("entry" in change) this.appendEvent("queue.entry", change.entry, now);
      else this.appendEvent("queue.removed", { id: change.removed }, now);
    }
    this.streams.wake();
  }

  /** Publishes, then sets the alarm for when the next failed entry's 24 hours end (its removal is published then). */
  private async publishUntilNextExpiry(now: number): Promise<void> {
    this.publish(now);
    const expiry = this.store.submissions.expireFailed(now);
    if (expiry !== undefined) await this.scheduleAt(expiry);
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

  /**
   * Sets the alarm for `at` unless an earlier one is set. Alarms keep whole milliseconds: one asked for
   * 12.5 is set for 13, since 12, the moment an alarm may just have run at, would count as already run.
   */
  private async scheduleAt(at: number): Promise<void> {
    const whole = Math.ceil(at);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > whole) await this.ctx.storage.setAlarm(whole);
  }

  private inputOf(task: TaskRow): AgentTask {
    if (this.runningInput?.taskId !== task.id) this.runningInput = this.agentTask(this.store.submissions.byId(task.submission_id)!, task.id);
    return this.runningInput;
  }

  /** A webhook event's body as receivers get it, `{ type, timestamp, data }`; null when the chat no longer keeps it. */
  async webhookPayload(eventId: string): Promise<string | null> {
    const chat = this.store.isInitialised() ? this.store.chat() : undefined;
    const event = chat ? this.outbox.event(eventId) : undefined;
    if (!chat || !event) return null;
    const about = { projectId: chat.project_id, chatId: chat.id };
    let data: object | undefined;
    if (event.type === "message.completed") {
      const message = this.store.message(event.ref);
      data = message && { ...about, message };
    } else if (event.type === "submission.failed") {
      const submission = this.store.submissions.byId(event.ref);
      data = submission && { ...about, entry: entryOf(submission, "failed") };
    } else {
      data = { ...about, chat: JSON.parse(event.ref) };
    }
    return data ? JSON.stringify({ type: event.type, timestamp: iso(event.at), data }) : null;
  }

  /**
   * Hands the outbox's events to the delivery queue, one message per subscribed endpoint, and marks
   * them; if the queue or the project's webhooks cannot be reached, the alarm tries again shortly.
   * A crash between the send and the mark sends them again: the same webhook-id, deduplicated by receivers.
   */
  private handOffWebhooks(): Promise<void> {
    // finally() runs after the assignment even when nothing waits, so the field never keeps a settled hand-off.
    this.handingOff ??= this.handOffWaiting().finally(() => {
      this.handingOff = undefined;
    });
    return this.handingOff;
  }

  private async handOffWaiting(): Promise<void> {
    try {
      const { id: chatId, project_id: projectId } = this.store.chat()!;
      const project = this.env.PROJECT_WEBHOOKS.getByName(projectId);
      for (let events = this.outbox.waitingEvents(20); events.length > 0; events = this.outbox.waitingEvents(20)) {
        const subscriptions = await project.subscriptions();
        const tasks: WebhookTask[] = events.flatMap((e) =>
          subscriptions.filter((endpoint) => endpoint.events.includes(e.type)).map((endpoint) => ({ projectId, chatId, eventId: e.id, endpointId: endpoint.id, type: e.type })),
        );
        for (let i = 0; i < tasks.length; i += 100) await this.env.WEBHOOK_DELIVERIES.sendBatch(tasks.slice(i, i + 100).map((body) => ({ body })));
        this.outbox.handedOff(
          events.map((e) => e.id),
          Date.now(),
        );
      }
    } catch (error) {
      console.warn(JSON.stringify({ level: "warn", event: "webhook_handoff_failed", chatId: this.store.chat()?.id, error: describeForLog(error) }));
      // Changes meanwhile (a streaming reply's every batch) do not try again at once: the alarm does, in 5 s.
      this.handOffPausedUntil = Date.now() + RETRY_MS;
      await this.scheduleAt(this.handOffPausedUntil);
    }
  }

  /** When a task still working fails (AGENT_TIMEOUT_SECONDS after it started). */
  private deadlineOf(task: TaskRow): number {
    return task.started_at + config(this.env).agent.timeoutMs;
  }

  /** What an agent that runs in this object (a model) may do while its task runs; nothing once the task has ended. */
  private liveTask(task: TaskRow): LiveTask {
    const running = () => this.runningTaskNamed(task.id);
    const submission = () => this.store.submissions.byId(task.submission_id)!;
    return {
      earlierTurns: () => this.store.turnsBefore(submission().user_message_id ?? task.owner_message_id),
      prompt: () => {
        const { content, reply_to } = submission();
        return withQuote(content, reply_to ? this.store.message(reply_to)?.content : undefined);
      },
      reply: () => this.store.message(task.owner_message_id)?.content ?? "",
      append: (text) => {
        const current = running();
        if (!current) return false;
        const fits = withinUnits(text, REPLY_MAX - this.store.replyLength(task.owner_message_id));
        if (fits) this.appendToReply(current, fits, Date.now());
        return fits.length === text.length;
      },
      takeSteering: () => {
        const current = running();
        if (!current) return [];
        const offer = this.steeringOffer(current);
        this.takeSteering(current, offer, Date.now());
        return offer.map((row) => row.content);
      },
      finish: async (result) => void (await this.completeTask(task.id, { ...result, content: withinUnits(result.content, REPLY_MAX) })),
    };
  }

  private agentTask(submission: SubmissionRow, taskId: string): AgentTask {
    const chat = this.store.chat()!;
    return {
      taskId,
      chatId: chat.id,
      projectId: chat.project_id,
      content: submission.content,
      replyToMessageId: submission.reply_to,
      callbackUrl: taskCallbackUrl(config(this.env).publicOrigin, chat.id, taskId, "result"),
      steeringUrl: taskCallbackUrl(config(this.env).publicOrigin, chat.id, taskId, "steering"),
    };
  }
}
