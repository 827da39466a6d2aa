import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { TaskState } from "@a2a-js/sdk";
import { TaskNotCancelableError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { GatedEnv } from "../auth/gate";
import { ChatFollower } from "../channels/chat-follower";
import type { ChainAsTask } from "../chats/chain-schemas";
import type { NewPushConfig } from "../chats/room-calls";
import type { ChatService } from "../chats/service/chat-service";
import { config } from "../config";
import { ApiError } from "../http/problem";
import { authorise } from "../projects/guards";
import { memberProjects } from "../projects/store";
import { extendedAgentCard } from "./card";
import { fromRefusal, taskNotFound, unsupported } from "./errors";
import { canPush, pushConfigOf, pushOutcome, shownConfig } from "./push-configs";
import { type ChainFeed, streamTask, waitForTask } from "./task-feed";
import { TaskLocator, type TaskRef } from "./task-locator";
import { acceptedTask, historyLengthOf, isTerminal, taskOf, taskStateOf } from "./task-shape";
import { TaskList } from "./task-list";
import { type Submitted, TaskSubmit } from "./task-submit";

// A blocking SendMessage answers after this long at most, with the task as it then stands.
const BLOCKING_WAIT_MS = 60_000;
// How long CancelTask waits for a task being dispatched to stop.
const CANCEL_WAIT_MS = 10_000;

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
  ) {
    this.tasks = new TaskLocator(c.env, projectId);
  }

  private readonly tasks: TaskLocator;

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
    const { ref, contextId, follower, accepted } = await this.submit(params, !configuration?.returnImmediately);
    const shape = { historyLength: configuration?.historyLength, sent: ref.sent };
    // A new task answered at once is as its send left it: no call to read it back.
    if (!follower && accepted) return acceptedTask(ref, contextId, accepted, shape);
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
    return new TaskList(this.c.env, this.projectId, this.tasks).list(params);
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

  /** The chat a task is in and (unless told it is not needed) the messages A2A sent into it, for a caller who may reach the project. */
  private async locate(taskId: string, need: "read" | "write" = "read", withSent = true): Promise<TaskRef> {
    await this.access(need);
    return this.tasks.locate(taskId, withSent);
  }

  private read(ref: TaskRef, withHistory = true): Promise<{ task: ChainAsTask; eventId: number }> {
    return this.tasks.read(ref, withHistory);
  }

  /**
   * Sends the message where its ids say: a new chat, a chat (contextId), or the task (taskId), answering its question or
   * steering its work by its state (task-submit.ts). With `follow`, the chat's stream is opened before anything is sent,
   * so a caller with no stream place free sends nothing.
   */
  private async submit(params: SendMessageRequest, follow: boolean): Promise<Submitted> {
    // The project first (a caller who cannot reach it learns nothing more), then the message, all before its key is claimed.
    const { accountId } = await this.access("write");
    historyLengthOf(params.configuration?.historyLength);
    const submit = new TaskSubmit({
      env: this.c.env,
      projectId: this.projectId,
      accountId,
      chats: this.chats,
      tasks: this.tasks,
      protocol: this.protocol,
      follow: (chatId) => this.follow(chatId),
      addPushConfig: (ref, config, announce) => this.addPushConfig(ref, config, announce),
    });
    return submit.submit(params, follow);
  }

  private feed(ref: TaskRef): ChainFeed {
    return {
      read: () => this.read(ref),
      replyTextAt: (replyId, eventId) => this.c.env.CHAT_ROOM.getByName(ref.chatId).replyTextAt(this.projectId, replyId, eventId),
      stillAdmitted: () => this.chats.stillAdmitted(),
      sent: ref.sent,
    };
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

  private async *stream(ref: TaskRef, follower: ChatFollower, resumeAfter: number | undefined): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* streamTask(this.feed(ref), follower, this.signal, resumeAfter);
    } finally {
      follower.close();
    }
  }
}
