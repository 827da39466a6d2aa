import { DurableObject } from "cloudflare:workers";
import { agentFor } from "../../agent/select";
import type { AgentPort, AgentResult } from "../../agent/port";
import { config } from "../../config";
import { toBase64Url } from "../../crypto";
import type { Env } from "../../env";
import { iso } from "../../time";
import { type Change, nothing, RoomChanges } from "./change";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { ChatListSync, failedEntryExpiry, questionExpiry, Refunds } from "./deferred-jobs";
import { AlarmSchedule } from "./schedule";
import type { StreamGrant } from "./listeners";
import { RoomPublisher } from "./publisher";
import { ChatStreams } from "./streams";
import { sseComment } from "./event-log";
import { ANSWER_REFUSED } from "../room-calls";
import { QuestionStorage } from "./question-storage";
import { RoomStorage, type ChatRow } from "./room-storage";
import type { Chat } from "../schemas";
import { stateOf, SubmissionStorage } from "./submission-storage";
import { Chains } from "./chains";
import { TaskIndexFeed } from "./task-index";
import { admit } from "./admission";
import { RoomControl } from "./control";
import { RoomForks } from "./forks";
import { TaskRunner, type EndedTask, type PartialOutcome, type SteeringAck, type SteeringOffer } from "./task-runner";
import { WebhookHandOff } from "./webhook-handoff";
import { UsageOutbox } from "./usage-outbox";
import { WebhookOutbox } from "./webhook-outbox";
import { webhookPayload } from "./webhook-payload";
import { PushConfigBook, PushConfigs } from "./push-configs";
import type { WebhookSwitch } from "../webhook-switch";
import type * as Calls from "../room-calls";

const utf8 = new TextEncoder();
const NOT_HERE: Calls.NotHere = { kind: "not_found" };

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
  readonly #admission: (projectId: string, request: Calls.SubmitRequest) => Promise<Calls.SubmitOutcome>;
  readonly #pushBook: PushConfigBook;
  readonly #control: RoomControl;
  readonly #forks: RoomForks;
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
    this.#listSync = new ChatListSync(env, store, usage, outbox, (seq, limit) => chains.rootsAfter(seq, limit), new TaskIndexFeed(sql, submissions, chains));
    // A task that ended frees its configs' places in the project's count.
    const noticePushes = { notice: (now: number) => pushes.notice(now) && this.#pushBook.tellCount() };
    const change = (this.#change = new RoomChanges({ store, submissions, pushes: noticePushes, publisher, streams, handOff, refunds, schedule }).apply);
    this.#pushBook = new PushConfigBook({ env, ctx, store, submissions, pushes, change });
    const runner = (this.#runner = new TaskRunner({ env, ctx, store, submissions, questions, outbox, usage, publisher, change }, this.createAgent()));
    this.#control = new RoomControl({ store, submissions, questions, chains, runner, change });
    this.#forks = new RoomForks(sql, store, submissions, publisher, change, () => this.syncList());
    const admission = { store, submissions, questions, chains, runner, change, chatIn: (projectId: string) => this.chatIn(projectId) };
    this.#admission = (projectId, request) => admit(admission, projectId, request);
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

  /** Creates the chat unless it exists; `a2aContext`: the contextId an A2A client made for it, which its tasks carry. */
  async create(chatId: string, projectId: string, title: string, a2aContext: string | null = null): Promise<Chat> {
    this.#store.migrate();
    const now = Date.now();
    // A new chat's first version is the one the list will hear of.
    const write = () => {
      if (!this.#store.chat()) this.#store.insertChat({ id: chatId, project_id: projectId, title, created_at: iso(now), a2a_context: a2aContext });
    };
    this.#change(now, write, "unlisted");
    await this.syncList();
    return this.#store.view();
  }

  async get(projectId: string): Promise<Calls.ChatRead> {
    return this.chatIn(projectId) ? this.read() : NOT_HERE;
  }

  /** The chat as it stands, with the event id it is current to (read in the same synchronous stretch). */
  private read(): Calls.ChatRead {
    return { kind: "chat", chat: this.#store.view(), eventId: this.publisher.newestId() };
  }

  async rename(projectId: string, title: string): Promise<Calls.ChatRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    this.#change(Date.now(), () => this.#store.rename(title));
    await this.syncList();
    return this.read();
  }

  async setArchived(projectId: string, archived: boolean): Promise<Calls.ChatRead> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const now = Date.now();
    if (archived !== (chat.archived_at !== null)) this.#change(now, () => this.#store.setArchivedAt(archived ? iso(now) : null));
    else this.#change(now, nothing, "unlisted");
    await this.syncList();
    return this.read();
  }

  /** A message, a steering text or an answer to a question, admitted once per idempotency key (admission.ts). */
  async submit(projectId: string, request: Calls.SubmitRequest): Promise<Calls.SubmitOutcome> {
    return this.#admission(projectId, request);
  }

  /** A question the chat's agent asked, as it stands. */
  async question(projectId: string, questionId: string): Promise<Calls.QuestionOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.#questions.byId(questionId);
    return row ? { kind: "question", question: JSON.stringify(this.#questions.view(row, chat.id)) } : { kind: "question_not_found" };
  }

  async messages(projectId: string, cursor: string | undefined, limit: number): Promise<Calls.MessagesOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const before = cursor === undefined ? null : decodeCursor(chat.id, cursor);
    if (before === undefined) return { kind: "bad_cursor" };
    const page = this.#store.messagesBefore(before, limit);
    return { kind: "page", items: page.items, nextCursor: page.more && page.lastSeq !== null ? encodeCursor(chat.id, page.lastSeq) : null, eventId: this.publisher.newestId() };
  }

  // Not named "queue": that name is reserved for the Queues handler and is not callable over RPC.
  async queueEntries(projectId: string): Promise<Calls.QueueRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    return { kind: "queue", items: this.submissions.queue(Date.now()), eventId: this.publisher.newestId() };
  }

  /** What a submission became: its status and the ids of its task and messages. */
  async submissionState(projectId: string, submissionId: string): Promise<Calls.SubmissionOutcome> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    return row ? { kind: "submission", submission: stateOf(row, () => this.#store.errorOf(row.id)) } : { kind: "submission_not_found" };
  }

  /** The chain of a submission, from it to its end (chains.ts). */
  async chain(projectId: string, submissionId: string): Promise<Calls.ChainOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    return row ? { kind: "chain", chain: JSON.stringify(this.#chains.view(row, chat.id)) } : { kind: "submission_not_found" };
  }

  /** The chain a submission leads, as a task (chains.ts), with the newest event id it shows; its user messages unless told they are not needed. */
  async chainTask(projectId: string, submissionId: string, withUserMessages = true): Promise<Calls.ChainTaskOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    return { kind: "task", task: JSON.stringify(this.#chains.task(row, chat.id, withUserMessages)), eventId: this.publisher.newestId() };
  }

  /** A fork of this chat (forks.ts): its plan (the key claimed), or the next batch of the messages it copies, one read. */
  async forkSource(projectId: string, ask: Calls.ForkAsk): Promise<Calls.ForkSourceOutcome | Calls.NotHere> {
    const chat = this.chatIn(projectId);
    return chat ? this.#forks.source(chat, ask) : NOT_HERE;
  }

  /** This chat as a fork (forks.ts): made with its first batch of copies, then each next one copied once. */
  async forkFill(chatId: string, projectId: string, fill: Calls.ForkFill): Promise<Calls.ForkProgress> {
    this.#store.migrate();
    return this.#forks.fill(projectId, chatId, fill);
  }

  /** A reply's text as its chat's events had told it up to an event (a resumed A2A stream appends to it); null when not kept. */
  async replyTextAt(projectId: string, replyId: string, eventId: number): Promise<string | null> {
    return this.chatIn(projectId) ? this.publisher.textAt(replyId, eventId) : null;
  }

  /** Every task of the chat, newest submission first; or these of its tasks (a page of the project's), without their user messages unless asked. */
  async chainTasks(projectId: string, taskIds?: string[], withUserMessages = true): Promise<Calls.ChainTasksOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const roots = taskIds ? taskIds.flatMap((id) => this.submissions.byId(id) ?? []) : this.#chains.roots();
    const tasks = roots.map((row) => this.#chains.task(row, chat.id, withUserMessages)).filter((task) => task.isTask);
    return { kind: "tasks", tasks: JSON.stringify(tasks), eventId: this.publisher.newestId() };
  }

  /** Cancels a chain by what its end is doing (control.ts); answers the chain after. */
  async cancelChain(projectId: string, submissionId: string): Promise<Calls.ChainOutcome> {
    const chat = this.chatIn(projectId);
    if (!chat) return NOT_HERE;
    const row = this.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    this.#control.cancelChain(row);
    return { kind: "chain", chain: JSON.stringify(this.#chains.view(row, chat.id)) };
  }

  /** An answer a credential sent from an MCP form was refused: its own streams are told in a comment, so the call that asked ends with the problem. */
  async tellAnswerRefused(projectId: string, questionId: string, gateName: string, problem: string): Promise<void> {
    if (!this.chatIn(projectId)) return;
    this.streams.tell(gateName, sseComment(`${ANSWER_REFUSED} ${questionId} ${toBase64Url(utf8.encode(problem))}`));
  }

  /** One message of the chat, whatever its role, and the event id it is current to (read in the same synchronous stretch). */
  async message(projectId: string, messageId: string): Promise<Calls.MessageRead> {
    if (!this.chatIn(projectId)) return NOT_HERE;
    const message = this.#store.message(messageId);
    return message ? { kind: "message", message, eventId: this.publisher.newestId() } : { kind: "message_not_found" };
  }

  /** Stops an agent reply (control.ts). */
  async stopReply(projectId: string, messageId: string): Promise<Calls.MessageOutcome> {
    return this.chatIn(projectId) ? this.#control.stopReply(messageId) : NOT_HERE;
  }

  /** Removes a submission that has not started for good (control.ts). */
  async cancelSubmission(projectId: string, submissionId: string): Promise<Calls.CancelOutcome> {
    return this.chatIn(projectId) ? this.#control.cancelSubmission(submissionId) : NOT_HERE;
  }

  /** A live event stream: a snapshot (or, resuming, every kept event after `resumeFrom`), then each event as it is appended. */
  async follow(projectId: string, resumeFrom: number | null, grant: StreamGrant): Promise<Calls.Followed> {
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

  /** Adds an A2A push config to a task, or replaces the one with its id, within the task's and the project's limits (push-configs.ts). */
  async setPushConfig(projectId: string, taskId: string, config: Calls.NewPushConfig, announce: boolean): Promise<Calls.PushConfigOutcome> {
    const chat = this.chatIn(projectId);
    return chat ? this.#pushBook.set(chat, taskId, config, announce) : NOT_HERE;
  }

  /** A task's push configs, without their token or credentials. */
  async pushConfigs(projectId: string, taskId: string): Promise<Calls.PushConfigOutcome> {
    return this.chatIn(projectId) ? this.#pushBook.list(taskId) : NOT_HERE;
  }

  /** Deletes a task's push config (none with that id: nothing to do); no attempt starts after this returns. */
  async removePushConfig(projectId: string, taskId: string, configId: string): Promise<Calls.PushConfigOutcome> {
    return this.chatIn(projectId) ? this.#pushBook.remove(taskId, configId) : NOT_HERE;
  }

  /** What a push attempt sends (push-configs.ts); null when its config was deleted or the chat no longer keeps its event. */
  async pushDelivery(taskId: string, configId: string, eventId: string): Promise<Calls.PushDeliveryRead | null> {
    const chat = this.#store.isInitialised() ? this.#store.chat() : undefined;
    return chat ? this.#pushes.delivery(taskId, configId, this.#outbox.event(eventId), chat.id) : null;
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
