import { DurableObject } from "cloudflare:workers";
import { agentFor } from "../../agent/select";
import type { AgentPort, AgentResult } from "../../agent/port";
import { config } from "../../config";
import { sha256Hex, toBase64Url } from "../../crypto";
import { submissionIdOf } from "../submission-ids";
import type { Env } from "../../env";
import { offerProjectState } from "../../projects/access";
import { iso } from "../../time";
import { answerJson, fitAnswer } from "./answers";
import { type Change, nothing, RoomChanges } from "./change";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { ChatListSync, failedEntryExpiry, questionExpiry, Refunds } from "./deferred-jobs";
import { AlarmSchedule } from "./schedule";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import type { StreamGrant } from "./listeners";
import { offerMaintenanceFlag } from "../maintenance";
import { RoomPublisher } from "./publisher";
import { ChatStreams } from "./streams";
import { sseComment } from "./event-log";
import { ANSWER_REFUSED } from "../room-calls";
import { QuestionStorage } from "./question-storage";
import { RoomStorage, type ChatRow } from "./room-storage";
import type { Chat, IfBusy } from "../schemas";
import { stateOf, type SubmissionRow, SubmissionStorage } from "./submission-storage";
import { Chains } from "./chains";
import { joining } from "./joining";
import { TaskRunner, type EndedTask, type PartialOutcome, type SteeringAck, type SteeringOffer } from "./task-runner";
import { WebhookHandOff } from "./webhook-handoff";
import { UsageOutbox } from "./usage-outbox";
import { WebhookOutbox } from "./webhook-outbox";
import { webhookPayload } from "./webhook-payload";
import { PUSH_CONFIGS_PER_TASK, PushConfigs } from "./push-configs";
import { log } from "../../log";
import type { WebhookSwitch } from "../webhook-switch";
import type {
  CancelOutcome,
  ChainOutcome,
  ChainTaskOutcome,
  ChainTasksOutcome,
  ChatRead,
  Followed,
  MessageOutcome,
  MessageRead,
  MessagesOutcome,
  NewPushConfig,
  NotHere,
  PushConfigOutcome,
  PushDeliveryRead,
  QuestionOutcome,
  QueueRead,
  SubmissionOutcome,
  SubmitOutcome,
  SubmitRequest,
} from "../room-calls";

const utf8 = new TextEncoder();
const NOT_HERE: NotHere = { kind: "not_found" };

/**
 * One object per chat, the single source of truth for its title, archive state, messages, queue,
 * idempotency keys and running task. Requests only record, each as one change; the task runner runs
 * tasks one at a time; the alarm is set for whatever is due first, the runner's work or a deferred job.
 */
export class ChatRoom extends DurableObject<Env> {
  readonly #store: RoomStorage;
  readonly #questions: QuestionStorage;
  readonly #outbox: WebhookOutbox;
  readonly #runner: TaskRunner;
  readonly #refunds: Refunds;
  readonly #listSync: ChatListSync;
  readonly #change: Change;
  readonly #chains: Chains;
  readonly #pushes: PushConfigs;
  // Push configs being added whose project-wide count is being asked, and the number of the chat's last word on its count.
  #pushReservations = 0;
  #pushCountVersion = Date.now() * 1000;
  // What a subclass may use: the submissions and the queue they form, the log's publisher, the open streams,
  // and the one alarm, derived from every deferred job (a subclass may owe more work).
  protected readonly submissions: SubmissionStorage;
  protected readonly publisher: RoomPublisher;
  protected readonly streams: ChatStreams;
  protected readonly schedule: AlarmSchedule;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    const submissions = (this.submissions = new SubmissionStorage(sql));
    const outbox = (this.#outbox = new WebhookOutbox(sql));
    const questions = (this.#questions = new QuestionStorage(sql, outbox, config(env).questionTtlMs));
    const store = (this.#store = new RoomStorage(sql, submissions, questions));
    const chains = (this.#chains = new Chains(sql, submissions, store, questions));
    const pushes = (this.#pushes = new PushConfigs(sql, submissions, chains, questions, outbox));
    const schedule = (this.schedule = new AlarmSchedule(ctx, store));
    const publisher = (this.publisher = new RoomPublisher(sql, store, submissions, questions));
    const streams = (this.streams = new ChatStreams(ctx, env, publisher));
    const usage = new UsageOutbox(sql);
    const refunds = (this.#refunds = new Refunds(env, ctx, store, schedule));
    const handOff = new WebhookHandOff(env, ctx, store, outbox, (event, projectId, chatId) => pushes.targets(event, projectId, chatId), schedule);
    this.#listSync = new ChatListSync(env, store, usage, outbox, (seq, limit) => this.#chains.rootsAfter(seq, limit));
    // A task that ended frees its configs' places in the project's count.
    const noticePushes = { notice: (now: number) => pushes.notice(now) && this.tellPushCount() };
    const change = (this.#change = new RoomChanges({ store, submissions, pushes: noticePushes, publisher, streams, handOff, refunds, schedule }).apply);
    this.#runner = new TaskRunner({ env, ctx, store, submissions, questions, outbox, usage, publisher, change }, this.createAgent());
    // In the order the alarm runs them: credits go back before the next task is charged, the chat list hears last.
    schedule.add("refunds", refunds);
    schedule.add("tasks", { dueAt: () => this.#runner.dueAt(), run: () => this.#runner.runDue() });
    schedule.add("webhook hand-off", handOff);
    schedule.add("failed entry expiry", failedEntryExpiry(submissions, change));
    schedule.add("question expiry", questionExpiry(questions, change));
    schedule.add("chat list", this.#listSync);
    if (store.isInitialised()) store.migrate();
    if (this.#runner.recoverOrphan(Date.now())) schedule.reschedule(Date.now());
  }

  /** The agent this chat's tasks run on, as the deployment's vars choose it. */
  protected createAgent(): AgentPort {
    return agentFor(config(this.env), { ai: this.env.AI, keepAlive: (work) => this.ctx.waitUntil(work) });
  }

  /** The chat's row when it exists and belongs to this project; otherwise the caller answers not found. */
  private chatIn(projectId: string): ChatRow | undefined {
    const chat = this.#store.isInitialised() ? this.#store.chat() : undefined;
    return chat?.project_id === projectId ? chat : undefined;
  }

  async create(chatId: string, projectId: string, title: string): Promise<Chat> {
    this.#store.migrate();
    const now = Date.now();
    // A new chat's first version is the one the list will hear of.
    const write = () => {
      if (!this.#store.chat()) this.#store.insertChat({ id: chatId, project_id: projectId, title, created_at: iso(now) });
    };
    this.#change(now, write, "unlisted");
    await this.syncList();
    return this.#store.view();
  }

  async get(projectId: string): Promise<ChatRead> {
    return this.chatIn(projectId) ? this.read() : NOT_HERE;
  }

  /** The chat as it stands, with the event id it is current to (read in the same synchronous stretch). */
  private read(): ChatRead {
    return { kind: "chat", chat: this.#store.view(), eventId: this.publisher.newestId() };
  }

  async rename(projectId: string, title: string): Promise<ChatRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    this.#change(Date.now(), () => this.#store.rename(title));
    await this.syncList();
    return this.read();
  }

  async setArchived(projectId: string, archived: boolean): Promise<ChatRead> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const now = Date.now();
    if (archived !== (chat.archived_at !== null)) this.#change(now, () => this.#store.setArchivedAt(archived ? iso(now) : null));
    else this.#change(now, nothing, "unlisted");
    await this.syncList();
    return this.read();
  }

  /**
   * Accepts a message, a steering text or an answer to a question once per idempotency key (one key space
   * for the three). The lookup and the insert share one synchronous stretch. A steering text waits for the
   * task the chat is working on (running, or being dispatched) to take it; on a chat that is not working it
   * is sent like a message. An answer is a message whose text is the answer in words; a send or steer
   * accepted while a question is pending answers it with its text, or supersedes one that takes no text.
   * A send's If-Busy says how it joins a busy chat (joining.ts), decided in the same stretch as the key.
   */
  async submit(projectId: string, request: SubmitRequest): Promise<SubmitOutcome> {
    // What a question asks never changes, so an answer's words can be found before the await below.
    const before = request.kind === "answer" ? this.chatIn(projectId) : undefined;
    const asked = before && request.kind === "answer" ? this.#questions.byId(request.questionId) : undefined;
    const fit = asked && request.kind === "answer" ? fitAnswer(this.#questions.view(asked, before!.id), request.answer) : undefined;
    const content = request.kind === "answer" ? (fit?.fits ? fit.content : "") : request.content;
    // Before anything is decided: from here to the insert nothing awaits. The id a new submission would get is its chat's
    // and key's (the chat's id is this object's name, which the chat's row holds once created).
    const chatId = this.#store.isInitialised() ? this.#store.chat()?.id : undefined;
    const [contentHash, newId] = await Promise.all([sha256Hex(content), chatId ? submissionIdOf(chatId, request.idempotencyKey) : undefined]);
    const chat = this.chatIn(projectId);
    // A chat created while this waited was not there when it came: as if it came first.
    if (!chat || !newId) return NOT_HERE;
    const replyTo = request.kind === "answer" ? null : request.replyToMessageId;
    // Part of the input, so it is refused before the key is looked at (a replay's target was valid, and messages stay).
    if (replyTo && !this.#store.hasMessage(replyTo)) return { kind: "unknown_reply_target" };
    const question = request.kind === "answer" ? this.#questions.byId(request.questionId) : undefined;
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
    if (request.credential.atCreditLimit) return { kind: "credit_limit" };
    if (chat.archived_at !== null) return { kind: "archived" };
    if (question && question.status !== "pending") return { kind: "question_not_pending", status: question.status };
    if (fit && !fit.fits) return { kind: "answer_does_not_fit", why: fit.why };
    const ifBusy: IfBusy = request.kind === "send" ? request.ifBusy : request.kind === "steer" ? "steer" : "queue";
    const joins = joining(ifBusy, { busy: this.submissions.hasPendingWork(), working: this.submissions.isWorking(), held: request.seen.maintenance.value });
    if (joins === "chat_busy") return { kind: "chat_busy" };
    const contentBytes = utf8.encode(content).byteLength;
    const load = this.submissions.load();
    if (load.entries >= QUEUE_MAX_ENTRIES || load.bytes + contentBytes > QUEUE_MAX_BYTES) return { kind: "queue_full" };
    offerMaintenanceFlag(request.seen.maintenance);
    offerProjectState(projectId, request.seen.project);
    const now = Date.now();
    const submission = { submissionId: newId!, chatId: chat.id, disposition: joins.disposition };
    // The working reply stops first (as POST …/stop), then the interrupt goes ahead of everything pending, what the stop requeued included.
    const running = joins.interrupting ? this.#store.runningTask() : undefined;
    if (running) this.#runner.stop(running, now);
    this.#change(now, () => {
      // A task still being dispatched ends stopped once charged, without the agent starting.
      if (joins.interrupting) this.submissions.stopDispatching();
      const { submissionId } = submission;
      // The question it answered (an answer's, or a pending one that takes its text); any other pending question is superseded.
      const answered = request.kind === "answer" ? this.#questions.answer(question!, request.answer, submissionId, now) : this.#questions.closeBySend(content, submissionId, now);
      // An answer goes on with the chain of the submission whose reply asked.
      const chainRootId = this.#chains.rootFor(submissionId, answered);
      this.submissions.insert(
        {
          id: submission.submissionId,
          idempotency_key: request.idempotencyKey,
          kind: request.kind,
          content,
          content_bytes: contentBytes,
          content_hash: contentHash,
          reply_to: replyTo,
          disposition: submission.disposition,
          status: joins.status,
          created_at: iso(now),
          question_id: answered ?? null,
          if_busy: ifBusy,
          credential: request.credential.gateName,
          chain_root_id: chainRootId,
        },
        joins.interrupting,
      );
    });
    return { kind: "accepted", replayed: false, submission };
  }

  /** A question the chat's agent asked, as it stands. */
  async question(projectId: string, questionId: string): Promise<QuestionOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.#questions.byId(questionId);
    return row ? { kind: "question", question: JSON.stringify(this.#questions.view(row, chat.id)) } : { kind: "question_not_found" };
  }

  async messages(projectId: string, cursor: string | undefined, limit: number): Promise<MessagesOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const before = cursor === undefined ? null : decodeCursor(chat.id, cursor);
    if (before === undefined) return { kind: "bad_cursor" };
    const page = this.#store.messagesBefore(before, limit);
    return { kind: "page", items: page.items, nextCursor: page.more && page.lastSeq !== null ? encodeCursor(chat.id, page.lastSeq) : null, eventId: this.publisher.newestId() };
  }

  // Not named "queue": that name is reserved for the Queues handler and is not callable over RPC.
  async queueEntries(projectId: string): Promise<QueueRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    return { kind: "queue", items: this.submissions.queue(Date.now()), eventId: this.publisher.newestId() };
  }

  /** What a submission became: its status and the ids of its task and messages. */
  async submissionState(projectId: string, submissionId: string): Promise<SubmissionOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    return row ? { kind: "submission", submission: stateOf(row, () => this.#store.errorOf(row.id)) } : { kind: "submission_not_found" };
  }

  /** The chain of a submission, from it to its end (chains.ts). */
  async chain(projectId: string, submissionId: string): Promise<ChainOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    return row ? { kind: "chain", chain: JSON.stringify(this.#chains.view(row, chat.id)) } : { kind: "submission_not_found" };
  }

  /** The chain a submission leads, as a task (chains.ts), with the newest event id it shows; its user messages unless told they are not needed. */
  async chainTask(projectId: string, submissionId: string, withUserMessages = true): Promise<ChainTaskOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    return { kind: "task", task: JSON.stringify(this.#chains.task(row, chat.id, withUserMessages)), eventId: this.publisher.newestId() };
  }

  /** Every task of the chat, newest submission first. */
  async chainTasks(projectId: string): Promise<ChainTasksOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const tasks = this.#chains
      .roots()
      .map((row) => this.#chains.task(row, chat.id))
      .filter((task) => task.isTask);
    return { kind: "tasks", tasks: JSON.stringify(tasks), eventId: this.publisher.newestId() };
  }

  /**
   * Cancels a chain by what its end is doing: a waiting end is cancelled (as DELETE …/queue/{id}), a working one
   * stopped (as POST …/stop), and a question it waits on withdrawn; an ended chain is left as it is. Answers the chain after.
   */
  async cancelChain(projectId: string, submissionId: string): Promise<ChainOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    const { end, question } = this.#chains.endOf(row);
    const now = Date.now();
    const task = this.#store.runningTask();
    if (end.status === "queued" || end.status === "steering") {
      this.cancelWaiting(end, now);
    } else if (end.status === "dispatching") {
      // Its reply is written stopped once it is charged, and the agent never starts (as an interrupt does).
      this.#change(now, () => this.submissions.stopDispatching(end.id), "unlisted");
    } else if (task && (task.submission_id === end.id || (end.status === "done" && task.reply_message_id === end.reply_message_id))) {
      // Its task runs (or, a taken steering text, the task that took it): the reply stops.
      this.#runner.stop(task, now);
    } else if (question?.status === "pending") {
      this.#change(now, () => this.#questions.withdraw(question, now));
    }
    return { kind: "chain", chain: JSON.stringify(this.#chains.view(row, chat.id)) };
  }

  /**
   * An answer a credential sent from an MCP form was refused (credit limit, archived, queue full, role or scope):
   * that credential's own streams are told, as a comment (no event of the chat's), so the call that asked ends with the problem.
   */
  async tellAnswerRefused(projectId: string, questionId: string, gateName: string, problem: string): Promise<void> {
    if (!this.chatIn(projectId)) return;
    this.streams.tell(gateName, sseComment(`${ANSWER_REFUSED} ${questionId} ${toBase64Url(utf8.encode(problem))}`));
  }

  /** One message of the chat, whatever its role, and the event id it is current to (read in the same synchronous stretch). */
  async message(projectId: string, messageId: string): Promise<MessageRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const message = this.#store.message(messageId);
    return message ? { kind: "message", message, eventId: this.publisher.newestId() } : { kind: "message_not_found" };
  }

  /**
   * Stops an agent reply: a working one ends at once as interrupted_by_user with what it had written,
   * and the queue moves on; one that has ended is answered as it is, so a retried or late stop is safe.
   */
  async stopReply(projectId: string, messageId: string): Promise<MessageOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const message = this.#store.message(messageId);
    if (message?.role !== "owner") return { kind: "message_not_found" };
    const task = this.#store.runningTask();
    if (message.status !== "working" || task?.reply_message_id !== messageId) return { kind: "message", message };
    this.#runner.stop(task, Date.now());
    return { kind: "message", message: this.#store.message(messageId)! };
  }

  /** Removes a submission that has not started (queued, steering or failed) for good; its key then answers submission_cancelled. */
  async cancelSubmission(projectId: string, submissionId: string): Promise<CancelOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    if (row.status === "cancelled") return { kind: "cancelled" };
    if (row.status !== "queued" && row.status !== "steering" && row.status !== "failed") return { kind: "started" };
    this.cancelWaiting(row, Date.now());
    return { kind: "cancelled" };
  }

  /** A submission that has not started leaves for good; its key then answers submission_cancelled. */
  private cancelWaiting(row: SubmissionRow, now: number): void {
    // Only queuedCount is part of the summary: the chat list must hear that it went down.
    this.#change(now, () => this.submissions.move(row, "cancelled"), row.status === "queued" ? "listed" : "unlisted");
  }

  /**
   * A live event stream: a snapshot (or, resuming, every kept event after `resumeFrom`), then each
   * event as it is appended. Null when the chat is not in this project.
   */
  async follow(projectId: string, resumeFrom: number | null, grant: StreamGrant): Promise<Followed> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const now = Date.now();
    // Failed entries whose 24 hours ended leave the queue as events first, so the log and a snapshot agree;
    // followers hear of the next one when it comes, also for entries that failed before this object woke.
    this.#change(now, nothing, "unlisted");
    const { cursor, first } = this.publisher.streamStart(resumeFrom, now);
    return { kind: "stream", stream: this.streams.open(cursor, first, grant, now) };
  }

  /** The client of the stream holding this lease hung up. */
  async unfollow(leaseId: string): Promise<void> {
    this.streams.hungUp(leaseId);
  }

  /** An agent's result for a task: the http adapter's callback, or the end of a model's run in this object. */
  async completeTask(taskId: string, result: AgentResult): Promise<"done" | EndedTask> {
    const outcome = await this.#runner.complete(taskId, result);
    // A failed task's credits are back when its end is answered.
    await this.#refunds.settled();
    return outcome;
  }

  /** An external agent's partial output: appended once per part number, in order, only while the task runs. */
  async appendPartial(taskId: string, seq: number, text: string): Promise<PartialOutcome> {
    return this.#runner.appendPartial(taskId, seq, text);
  }

  /** The steering texts an external agent's running task may take next, oldest first. */
  async steeringFor(taskId: string): Promise<SteeringOffer> {
    return this.#runner.steeringFor(taskId);
  }

  /** An external agent took these steering texts; each becomes a user message of the task. */
  async acceptSteering(taskId: string, ids: string[]): Promise<SteeringAck> {
    return this.#runner.acceptSteering(taskId, ids);
  }

  /** A webhook event's body as receivers get it, `{ type, timestamp, data }`; null when the chat no longer keeps it. */
  async webhookPayload(eventId: string): Promise<string | null> {
    const chat = this.#store.isInitialised() ? this.#store.chat() : undefined;
    const event = chat ? this.#outbox.event(eventId) : undefined;
    return chat && event ? webhookPayload(event, chat, { store: this.#store, submissions: this.submissions, questions: this.#questions }) : null;
  }

  /**
   * Adds an A2A push config to a task, or replaces the one with its id: at most five a task, and (for a new one) within
   * the project's limit across its chats' tasks that have not ended, which its chat list counts. `announce`: the task's
   * state now is pushed too (a task created with its config).
   */
  async setPushConfig(projectId: string, taskId: string, config: NewPushConfig, announce: boolean): Promise<PushConfigOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    if (!this.submissions.byId(taskId)) return { kind: "submission_not_found" };
    if (this.#pushes.hasEnded(taskId)) return { kind: "ended" };
    const configs = this.#pushes.list(taskId);
    const replacing = configs.some((c) => c.id === config.id);
    if (!replacing) {
      if (configs.length >= PUSH_CONFIGS_PER_TASK) return { kind: "task_limit" };
      // Counted before it exists, with the others being added meanwhile, so two at once cannot both take the last place.
      this.#pushReservations++;
      try {
        const count = this.#pushes.openCount() + this.#pushReservations;
        if (!(await this.env.PROJECT_CHATS.getByName(projectId).holdPushConfigs(chat.id, count, ++this.#pushCountVersion, true))) {
          return { kind: "project_limit" };
        }
      } finally {
        this.#pushReservations--;
      }
      if (this.#pushes.hasEnded(taskId)) return { kind: "ended" };
    }
    const now = Date.now();
    let outcome: "set" | "task_limit" = "task_limit";
    this.#change(now, () => (outcome = this.#pushes.set(taskId, config, now, announce)), "unlisted");
    if (!replacing) this.tellPushCount();
    if (outcome === "task_limit") return { kind: "task_limit" };
    return { kind: "set", config: this.#pushes.list(taskId).find((c) => c.id === config.id)! };
  }

  /** A task's push configs, without their token or credentials. */
  async pushConfigs(projectId: string, taskId: string): Promise<PushConfigOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    if (!this.submissions.byId(taskId)) return { kind: "submission_not_found" };
    return { kind: "configs", configs: this.#pushes.list(taskId) };
  }

  /** Deletes a task's push config (none with that id: nothing to do); no attempt starts after this returns. */
  async removePushConfig(projectId: string, taskId: string, configId: string): Promise<PushConfigOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    if (!this.submissions.byId(taskId)) return { kind: "submission_not_found" };
    this.#pushes.remove(taskId, configId);
    this.tellPushCount();
    return { kind: "removed" };
  }

  /** What a push attempt sends (push-configs.ts); null when its config was deleted or the chat no longer keeps its event. */
  async pushDelivery(taskId: string, configId: string, eventId: string): Promise<PushDeliveryRead | null> {
    const chat = this.#store.isInitialised() ? this.#store.chat() : undefined;
    return chat ? this.#pushes.delivery(taskId, configId, this.#outbox.event(eventId), chat.id) : null;
  }

  /** Tells the project's chat list how many push configs the chat's open tasks hold, in the background (a lost word only leaves the count high). */
  private tellPushCount(): void {
    const chat = this.#store.chat();
    if (!chat) return;
    const told = this.env.PROJECT_CHATS.getByName(chat.project_id)
      .holdPushConfigs(chat.id, this.#pushes.openCount() + this.#pushReservations, ++this.#pushCountVersion, false)
      .catch((error) => log.warn("push_count_not_told", { chatId: chat.id }, error));
    this.ctx.waitUntil(told);
  }

  /** The project's webhook switch flipped on (its chat list tells the chats that may have stopped recording events). */
  async webhooksSwitched(word: WebhookSwitch): Promise<void> {
    if (this.#store.isInitialised() && this.#store.chat()) this.#outbox.learn({ ...word, until: 0 }, Date.now());
  }

  /** Runs what is due (see AlarmSchedule). */
  override async alarm(): Promise<void> {
    await this.schedule.runDue();
  }

  /** Runs the chat list's sync now (from a request that changed what it lists), then derives the alarm again: it may have failed and be due later. */
  private async syncList(): Promise<void> {
    await this.#listSync.run();
    this.schedule.reschedule(Date.now());
  }
}
