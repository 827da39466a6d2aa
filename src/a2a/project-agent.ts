import {
  type AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message as A2AMessage,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
} from "@a2a-js/sdk";
import { ContentTypeNotSupportedError, TaskNotCancelableError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { GatedEnv } from "../auth/gate";
import { ChatFollower } from "../channels/chat-follower";
import type { ChatService } from "../chats/service/chat-service";
import type { ChainTask } from "../chats/chain-schemas";
import type { Submission } from "../chats/schemas";
import { config } from "../config";
import { sha256, toHex } from "../crypto";
import { ApiError, invalidPart } from "../http/problem";
import { Answer } from "../agent/question-shapes";
import { submissionIdOf } from "../chats/submission-ids";
import { isUuid, nameUuid } from "../ids";
import { authorise } from "../projects/guards";
import { memberProjects } from "../projects/store";
import { CONTENT_MAX } from "../agent/limits";
import { answerFromText } from "./answers";
import { extendedAgentCard } from "./card";
import { fromRefusal, invalid, malformed, taskNotFound, unsupported } from "./errors";
import { canPush, pushConfigOf, pushOutcome, shownConfig } from "./push-configs";
import type { NewPushConfig } from "../chats/room-calls";
import { type ChainFeed, streamTask, waitForTask } from "./task-feed";
import { acceptedTask, isInterrupted, isTerminal, taskOf, taskStateOf } from "./task-shape";

// The namespace of the chat keys A2A messages are sent under: a name-based UUID of the project, the account and the messageId.
const MESSAGE_KEY_NAMESPACE = "2b7d9e41-6c3a-4f58-9d2e-8a1b4c7f0e63";
// A blocking SendMessage answers after this long at most, with the task as it then stands.
const BLOCKING_WAIT_MS = 60_000;
const MESSAGE_ID_MAX = 128;
// How long CancelTask waits for a task being dispatched to stop.
const CANCEL_WAIT_MS = 10_000;
const TITLE_MAX = 160;
const PAGE_SIZE_DEFAULT = 50;
const PAGE_SIZE_MAX = 100;
const TEXT_MODES = new Set(["text/plain", "text/*", "*/*"]);
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** A task as A2A names it: its chat, its root submission, and the messages A2A sent into it (by submission), shown as sent. */
type TaskRef = { chatId: string; taskId: string; sent: Map<string, A2AMessage> };

// Which chat each task is in, as this isolate has learnt it (it never changes): at most this many, the oldest forgotten first.
const TASK_CHATS_KEPT = 10_000;
const taskChats = new Map<string, string>();
function rememberTaskChat(projectId: string, taskId: string, chatId: string): void {
  taskChats.set(`${projectId}/${taskId}`, chatId);
  if (taskChats.size > TASK_CHATS_KEPT) taskChats.delete(taskChats.keys().next().value!);
}

/** What a send asks of the chat, read from the A2A message: its text, or the data part that answers a question. */
type Content = { text: string; data: unknown | undefined };

const dataOutsideAnswer = () => new ContentTypeNotSupportedError({ message: "A data part answers a question, nothing else." });

/** A chat's title from a message's text: its first line, whitespace collapsed, 160 code points at most. */
function titleOf(text: string): string {
  const line = (text.split(/\r?\n/)[0] ?? "").replace(/\s+/g, " ").trim();
  return [...line].slice(0, TITLE_MAX).join("") || "A2A task";
}

/**
 * One project's agent as A2A sees it, for one request of one admitted caller: every method is a view of the project's
 * chats, through the chat service the routes call and the chat's object, so /v1, MCP and the web application see its work
 * as their own. contextId is a chat; a task is the chain of a submission, from its root.
 */
export class ProjectAgent implements A2ARequestHandler {
  constructor(
    private readonly c: Context<GatedEnv>,
    private readonly projectId: string,
    private readonly chats: ChatService,
    private readonly signal: AbortSignal,
    // SubscribeToTask's resume point: its Last-Event-ID (header or query).
    private readonly resumeAfter: number | undefined,
    // The protocol version the request speaks: a push config made through v0.3 gets v0.3 bodies.
    private readonly protocol: NewPushConfig["protocol"],
  ) {}

  private get publicOrigin(): string {
    return config(this.c.env).publicOrigin!;
  }

  /** The public card is served as JSON by the route; here, the extended card's shape without the project's name. */
  async getAgentCard(): Promise<AgentCard> {
    return extendedAgentCard(this.publicOrigin, this.projectId, canPush(this.c.env), "Project chat agent");
  }

  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest): Promise<AgentCard> {
    const access = await this.access("read");
    const project = (await memberProjects(this.c.env.DB, access.accountId)).find((p) => p.id === this.projectId);
    if (!project) throw taskNotFound();
    return extendedAgentCard(this.publicOrigin, this.projectId, canPush(this.c.env), project.name);
  }

  async sendMessage(params: SendMessageRequest): Promise<Task> {
    const { configuration } = params;
    const { ref, follower, accepted } = await this.submit(params, !configuration?.returnImmediately);
    const shape = { historyLength: configuration?.historyLength, sent: ref.sent };
    // A new task answered at once is as its send left it: no call to read it back.
    if (!follower && accepted) return acceptedTask(ref, accepted, shape);
    if (!follower) return taskOf((await this.read(ref)).task, shape);
    try {
      const stop = AbortSignal.any([this.signal, AbortSignal.timeout(BLOCKING_WAIT_MS)]);
      return taskOf(await waitForTask(this.feed(ref), follower, stop, this.signal), shape);
    } finally {
      follower.close();
    }
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { ref, follower } = await this.submit(params, true);
    yield* this.stream(ref, follower!, undefined);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    // Without history, the messages A2A sent into the task are not needed: the chat alone answers.
    const ref = await this.locate(params.id, "read", params.historyLength !== 0);
    const historyLength = historyLengthOf(params.historyLength);
    return taskOf((await this.read(ref, historyLength !== 0)).task, { historyLength, sent: ref.sent });
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const ref = await this.locate(params.id, "write");
    const { task } = await this.read(ref);
    const state = taskStateOf(task);
    if (state === TaskState.TASK_STATE_CANCELED) return taskOf(task, { sent: ref.sent });
    if (isTerminal(state)) throw new TaskNotCancelableError({ message: "The task has ended." });
    const cancelled = await this.chats.cancelChain({ projectId: this.projectId, chatId: ref.chatId }, ref.taskId);
    if (!cancelled.ok) throw fromRefusal(cancelled.problem);
    // A task still being dispatched stops as soon as its reply exists: looked at again, less and less often, for a while
    // (counted in pauses taken, not the clock's time).
    for (let waited = 0, pause = 25; ; waited += pause, pause = Math.min(pause * 2, 500)) {
      const { task: now } = await this.read(ref);
      if (isTerminal(taskStateOf(now))) return taskOf(now, { sent: ref.sent });
      if (waited >= CANCEL_WAIT_MS) break;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    throw new TaskNotCancelableError({ message: "The task did not stop in time; cancel it again." });
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    await this.access("read");
    const pageSize = params.pageSize ?? PAGE_SIZE_DEFAULT;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_SIZE_MAX) throw invalid("pageSize", `must be 1 to ${PAGE_SIZE_MAX}.`);
    const historyLength = historyLengthOf(params.historyLength) ?? 0;
    const offset = params.pageToken ? offsetOf(params.pageToken) : 0;
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    if (Number.isNaN(after) || (params.statusTimestampAfter && !RFC_3339.test(params.statusTimestampAfter))) throw invalid("statusTimestampAfter", "must be an RFC 3339 time.");
    if (!params.contextId) throw invalid("contextId", "is required: tasks are listed per chat.");
    const empty = { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    if (!isUuid(params.contextId)) return empty;
    const outcome = await this.c.env.CHAT_ROOM.getByName(params.contextId.toLowerCase()).chainTasks(this.projectId);
    if (outcome.kind !== "tasks") return empty;
    const matching = (JSON.parse(outcome.tasks) as ChainTask[])
      .filter((task) => params.status === TaskState.TASK_STATE_UNSPECIFIED || taskStateOf(task) === params.status)
      .filter((task) => after === undefined || task.enteredAt >= after)
      .sort((a, b) => b.enteredAt - a.enteredAt || (a.rootId < b.rootId ? -1 : 1));
    const page = matching.slice(offset, offset + pageSize);
    for (const task of page) rememberTaskChat(this.projectId, task.rootId, task.chatId);
    const next = offset + pageSize < matching.length ? tokenOf(offset + pageSize) : "";
    const includeArtifacts = params.includeArtifacts ?? false;
    // With history, the messages A2A sent into the page's tasks, as sent: one call for the page.
    const sent = new Map<string, Map<string, A2AMessage>>();
    if (historyLength > 0 && page.length > 0) {
      for (const row of await this.c.env.PROJECT_CHATS.getByName(this.projectId).sentIn(page.map((task) => task.rootId))) {
        sent.set(row.taskId, (sent.get(row.taskId) ?? new Map()).set(row.submissionId, JSON.parse(row.message) as A2AMessage));
      }
    }
    const tasks = page.map((task) => taskOf(task, { historyLength, includeArtifacts, sent: sent.get(task.rootId) }));
    return { tasks, nextPageToken: next, pageSize, totalSize: matching.length };
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const ref = await this.locate(params.id);
    const resumeAfter = this.resumeAfter;
    const { task } = await this.read(ref);
    if (resumeAfter === undefined && isTerminal(taskStateOf(task))) throw unsupported("The task has ended: subscribe with Last-Event-ID to replay it.");
    const follower = await this.follow(ref.chatId, resumeAfter);
    yield* this.stream(ref, follower, resumeAfter);
  }

  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    const ref = await this.task(params.taskId, "write");
    return this.addPushConfig(ref, await pushConfigOf(params, this.c.env, this.protocol), false);
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    const config = (await this.pushConfigs(params.taskId)).find((c) => c.id === params.id);
    if (!config) throw taskNotFound();
    return shownConfig(config);
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    // At most five: one page.
    return { configs: (await this.pushConfigs(params.taskId)).map(shownConfig), nextPageToken: "" };
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    const { chatId, taskId } = await this.task(params.taskId, "write");
    pushOutcome(await this.c.env.CHAT_ROOM.getByName(chatId).removePushConfig(this.projectId, taskId, params.id), "removed");
  }

  /** A task the caller may reach (a submission that leads no task is not found), without the messages A2A sent into it. */
  private async task(taskId: string, need: "read" | "write"): Promise<TaskRef> {
    const ref = await this.locate(taskId, need, false);
    await this.read(ref, false);
    return ref;
  }

  private async pushConfigs(taskId: string) {
    const { chatId, taskId: id } = await this.task(taskId, "read");
    return pushOutcome(await this.c.env.CHAT_ROOM.getByName(chatId).pushConfigs(this.projectId, id), "configs").configs;
  }

  /** Adds a push config to a task (its state now pushed too when `announce`), answered as Get shows it. */
  private async addPushConfig({ chatId, taskId }: TaskRef, config: NewPushConfig, announce: boolean): Promise<TaskPushNotificationConfig> {
    return shownConfig(pushOutcome(await this.c.env.CHAT_ROOM.getByName(chatId).setPushConfig(this.projectId, taskId, config, announce), "set").config);
  }

  /** The caller's access to the project; a project it cannot reach is a task not found, like any other. */
  private async access(need: "read" | "write") {
    try {
      return await authorise(this.c, need, this.projectId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw taskNotFound();
      throw error;
    }
  }

  /**
   * The chat a task is in and (unless told it is not needed) the messages A2A sent into it, for a caller who may reach
   * the project. Which chat a task is in never changes, so this isolate remembers it.
   */
  private async locate(taskId: string, need: "read" | "write" = "read", withSent = true): Promise<TaskRef> {
    await this.access(need);
    if (!isUuid(taskId)) throw taskNotFound();
    const known = taskChats.get(`${this.projectId}/${taskId.toLowerCase()}`);
    if (known && !withSent) return { chatId: known, taskId: taskId.toLowerCase(), sent: new Map() };
    const entry = await this.c.env.PROJECT_CHATS.getByName(this.projectId).taskEntry(taskId.toLowerCase());
    if (!entry) throw taskNotFound();
    rememberTaskChat(this.projectId, taskId.toLowerCase(), entry.chatId);
    // Kept in the SDK's own shape (text and data parts only, so plain JSON), which its transport serialises.
    const sent = new Map(entry.sent.map(({ submissionId, message }) => [submissionId, JSON.parse(message) as A2AMessage]));
    return { chatId: entry.chatId, taskId: taskId.toLowerCase(), sent };
  }

  /** A task as its chat's object has it, with the newest event id it shows; a submission that leads no task is not found. */
  private async read({ chatId, taskId }: TaskRef, withHistory = true): Promise<{ task: ChainTask; eventId: number }> {
    const outcome = await this.c.env.CHAT_ROOM.getByName(chatId).chainTask(this.projectId, taskId, withHistory);
    if (outcome.kind !== "task") throw taskNotFound();
    const task = JSON.parse(outcome.task) as ChainTask;
    if (!task.isTask) throw taskNotFound();
    return { task, eventId: outcome.eventId };
  }

  private feed(ref: TaskRef): ChainFeed {
    return { read: () => this.read(ref), stillAdmitted: () => this.stillAdmitted(), sent: ref.sent };
  }

  /**
   * The chat's event stream, taking one of the token's stream places (429 too_many_streams when none is free). A task
   * is followed whatever the token may read: chat:write is what SendMessage asks for, and the stream tells the caller
   * of its own task only.
   */
  private async follow(chatId: string, after?: number): Promise<ChatFollower> {
    const scope = this.caller.scopes.includes("chat:read") ? "chat:read" : "chat:write";
    const opened = await ChatFollower.open(this.chats, { projectId: this.projectId, chatId }, after, scope);
    if (!opened.ok) throw fromRefusal(opened.problem);
    return opened.body;
  }

  private get caller() {
    return this.c.get("caller");
  }

  private async stillAdmitted(): Promise<void> {
    const admitted = await this.chats.stillAdmitted();
    if (!admitted.ok) throw fromRefusal(admitted.problem);
  }

  private async *stream(ref: TaskRef, follower: ChatFollower, resumeAfter: number | undefined): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* streamTask(this.feed(ref), follower, this.signal, resumeAfter);
    } finally {
      follower.close();
    }
  }

  /**
   * Sends the message where its ids say: a new chat, a chat (contextId), or the task (taskId), answering its question or
   * steering its work by its state. messageId is the key: the same message again is the same task. With `follow`, the
   * chat's stream is opened before anything is sent, so a caller with no stream place free sends nothing.
   */
  private async submit(params: SendMessageRequest, follow: boolean): Promise<{ ref: TaskRef; follower: ChatFollower | undefined; accepted?: Submission["disposition"] }> {
    // The project first (a caller who cannot reach it learns nothing more), then the message, all before its key is claimed.
    const access = await this.access("write");
    historyLengthOf(params.configuration?.historyLength);
    const message = params.message;
    if (!message) throw invalid("message", "is required.");
    const content = contentOf(message, params.configuration?.acceptedOutputModes ?? []);
    const sentConfig = params.configuration?.taskPushNotificationConfig;
    const pushConfig = sentConfig ? await pushConfigOf(sentConfig, this.c.env, this.protocol) : undefined;
    const named = message.taskId ? await this.locate(message.taskId) : undefined;
    if (!named && content.data !== undefined) throw dataOutsideAnswer();
    if (content.data === undefined && (content.text.length < 1 || content.text.length > CONTENT_MAX)) {
      throw invalid("message.parts", `must hold 1 to ${CONTENT_MAX} characters of text.`);
    }
    const key = await nameUuid(MESSAGE_KEY_NAMESPACE, `${this.projectId}/${access.accountId}/${message.messageId}`);
    const fingerprint = toHex(await sha256(JSON.stringify({ parts: message.parts, contextId: message.contextId || null, taskId: message.taskId || null })));
    const contextId = message.contextId ? message.contextId.toLowerCase() : undefined;
    if (named && contextId && named.chatId !== contextId) throw invalid("message.taskId", "names a task of another chat than contextId.");
    if (contextId && !isUuid(contextId)) throw taskNotFound();
    // What this message will make, fixed before anything is sent (a submission's id is its chat's and its key's): claimed
    // with the key in one call, which also records the task's chat, so the task can be found the moment it exists.
    const proposedChat = named?.chatId ?? contextId ?? crypto.randomUUID();
    const submissionId = await submissionIdOf(proposedChat, key);
    const proposed = { chatId: proposedChat, taskId: named?.taskId ?? submissionId, submissionId, message: JSON.stringify(message) };
    const chats = this.c.env.PROJECT_CHATS.getByName(this.projectId);
    let claim = await chats.claimMessageKey(key, fingerprint, proposed);
    // A messageId is taken by a message that was accepted: one whose send was refused (nothing made) leaves it free.
    if (claim.kind === "conflict" && !(await this.exists(claim.chatId, claim.submissionId))) claim = await chats.claimMessageKey(key, fingerprint, proposed, true);
    if (claim.kind === "conflict") throw malformed("This messageId was used for another message.", "idempotency_key_reused");
    const made = claim.kind === "replay" ? claim : proposed;
    const { chatId, taskId } = made;
    rememberTaskChat(this.projectId, taskId, chatId);
    if (!named && !contextId) {
      // Creating is idempotent in the chat's object: a retry racing the first creates nothing twice.
      await this.c.env.CHAT_ROOM.getByName(chatId).create(chatId, this.projectId, titleOf(content.text));
    }
    const follower = follow ? await this.follow(chatId) : undefined;
    // The same message again: the task as it now stands, once its first send landed (else it is sent now, as the first would).
    const landed = async () => claim.kind === "replay" && (await this.exists(chatId, made.submissionId));
    try {
      const sent = new Map(named?.sent ?? []).set(made.submissionId, message);
      const ref = { chatId, taskId, sent };
      if (await landed()) return { ref: await this.locate(taskId), follower };
      try {
        if (named) {
          await this.continueTask(named, content, key);
          if (pushConfig) await this.addPushConfig(ref, pushConfig, false);
          return { ref, follower };
        }
        const accepted = await this.send(chatId, content, key);
        // The task exists now: its config pushes its state as it stands, then every change.
        if (pushConfig) await this.addPushConfig(ref, pushConfig, true);
        return { ref, follower, accepted };
      } catch (error) {
        // A retry racing its first send: the first landed meanwhile (and moved the task on), so this one is its replay.
        if (await landed()) return { ref: await this.locate(taskId), follower };
        throw error;
      }
    } catch (error) {
      follower?.close();
      throw error;
    }
  }

  /** Whether a claimed message's submission is there (one whose send was refused made none). */
  private async exists(chatId: string, submissionId: string): Promise<boolean> {
    const outcome = await this.c.env.CHAT_ROOM.getByName(chatId).submissionState(this.projectId, submissionId);
    return outcome.kind === "submission";
  }

  private async send(chatId: string, content: Content, key: string): Promise<Submission["disposition"]> {
    const sent = await this.chats.submit(
      { projectId: this.projectId, chatId },
      { kind: "send", idempotencyKey: key, content: content.text, replyToMessageId: null, ifBusy: "queue" },
    );
    if (!sent.ok) throw fromRefusal(sent.problem);
    return sent.body.disposition;
  }

  /** A message to a task: the answer to the question it waits on, or steering for its work; any other state takes none. */
  private async continueTask(ref: TaskRef, content: Content, key: string): Promise<void> {
    const { chatId } = ref;
    const { task } = await this.read(ref);
    const state = taskStateOf(task);
    if ((state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) && task.question) {
      let answer: unknown = content.data;
      if (answer === undefined) {
        const read = answerFromText(task.question, content.text);
        if (read.kind === "unfit") throw malformed(read.why, "answer_does_not_fit");
        answer = read.answer;
      }
      // Held to the schema an answer's body is held to on /v1.
      const parsed = Answer.safeParse(answer);
      if (!parsed.success) throw fromRefusal(invalidPart(parsed.error));
      const answered = await this.chats.submit({ projectId: this.projectId, chatId }, { kind: "answer", idempotencyKey: key, questionId: task.question.id, answer: parsed.data });
      if (!answered.ok) throw fromRefusal(answered.problem);
      return;
    }
    if (state === TaskState.TASK_STATE_WORKING) {
      if (content.data !== undefined) throw dataOutsideAnswer();
      const steered = await this.chats.submit({ projectId: this.projectId, chatId }, { kind: "steer", idempotencyKey: key, content: content.text, replyToMessageId: null });
      if (!steered.ok) throw fromRefusal(steered.problem);
      return;
    }
    throw unsupported(isInterrupted(state) ? "The task has ended: send without taskId." : "The task has not started yet.");
  }
}

/** A message's text (its text parts joined by line breaks) and data part; other kinds of part, and output modes without text, are refused. */
function contentOf(message: A2AMessage, acceptedOutputModes: string[]): Content {
  if (message.role !== Role.ROLE_USER) throw invalid("message.role", 'must be "ROLE_USER".');
  if (message.messageId.length < 1 || message.messageId.length > MESSAGE_ID_MAX) throw invalid("message.messageId", `must be 1 to ${MESSAGE_ID_MAX} characters.`);
  if (message.parts.length === 0) throw invalid("message.parts", "must hold at least one part.");
  if (acceptedOutputModes.length > 0 && !acceptedOutputModes.some((mode) => TEXT_MODES.has(mode))) {
    throw new ContentTypeNotSupportedError({ message: "This agent answers in text/plain: accept it (or text/*)." });
  }
  const texts: string[] = [];
  let data: unknown;
  for (const part of message.parts) {
    const value = part.content;
    if (value?.$case === "text") texts.push(value.value);
    else if (value?.$case === "data") data = value.value;
    else throw new ContentTypeNotSupportedError({ message: "Send text parts; files are not taken." });
  }
  return { text: texts.join("\n"), data };
}

const historyLengthOf = (value: number | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0) throw invalid("historyLength", "must be a non-negative integer.");
  return value;
};

const tokenOf = (offset: number) => btoa(`o:${offset}`).replaceAll("=", "");
function offsetOf(token: string): number {
  let text: string;
  try {
    text = atob(token);
  } catch {
    throw invalid("pageToken", "is not one this server gave out.");
  }
  const offset = /^o:(\d{1,9})$/.exec(text)?.[1];
  if (offset === undefined) throw invalid("pageToken", "is not one this server gave out.");
  return Number(offset);
}
