import type { ListTasksRequest, ListTasksResponse, Message as A2AMessage } from "@a2a-js/sdk";
import { TaskState } from "@a2a-js/sdk";
import type { ChainAsTask } from "../chats/chain-schemas";
import type { TaskKey, TaskQuery } from "../chats/list/project-tasks";
import type { Env } from "../env";
import { invalid } from "./errors";
import type { TaskLocator } from "./task-locator";
import { historyLengthOf, taskOf, taskStateOf } from "./task-shape";

const PAGE_SIZE_DEFAULT = 50;
const PAGE_SIZE_MAX = 100;
// A status left out reads as UNSPECIFIED, or (the JS SDK's client) as UNRECOGNIZED: no filter either way.
const NO_STATUS_FILTER = new Set<TaskState>([TaskState.TASK_STATE_UNSPECIFIED, TaskState.UNRECOGNIZED]);
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** ListTasks for one project: a chat's tasks (by its id or a context a client made), or the project's from its task index. */
export class TaskList {
  constructor(
    private readonly env: Env,
    private readonly projectId: string,
    private readonly locator: TaskLocator,
  ) {}

  /** A page of tasks: of one chat when contextId names it, else of the project. The caller may read the project. */
  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? PAGE_SIZE_DEFAULT;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > PAGE_SIZE_MAX) throw invalid("pageSize", `must be 1 to ${PAGE_SIZE_MAX}.`);
    const historyLength = historyLengthOf(params.historyLength) ?? 0;
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    if (Number.isNaN(after) || (params.statusTimestampAfter && !RFC_3339.test(params.statusTimestampAfter))) throw invalid("statusTimestampAfter", "must be an RFC 3339 time.");
    const filter = statusFilterOf(params.status);
    const {
      tasks: page,
      nextPageToken,
      totalSize,
    } = params.contextId
      ? await this.chatTasks(params.contextId, filter, after, params.pageToken, pageSize)
      : await this.projectTasks(filter, after, params.pageToken, pageSize, historyLength > 0);
    for (const task of page) this.locator.remember(task.chain.rootId, task.chatId);
    const includeArtifacts = params.includeArtifacts ?? false;
    // With history, the messages A2A sent into the page's tasks, as sent: one call for the page.
    const sent = new Map<string, Map<string, A2AMessage>>();
    if (historyLength > 0 && page.length > 0) {
      for (const row of await this.env.PROJECT_CHATS.getByName(this.projectId).sentIn(page.map((task) => task.chain.rootId))) {
        sent.set(row.taskId, (sent.get(row.taskId) ?? new Map()).set(row.submissionId, JSON.parse(row.message) as A2AMessage));
      }
    }
    const tasks = page.map((task) => taskOf(task, { historyLength, includeArtifacts, sent: sent.get(task.chain.rootId) }));
    return { tasks, nextPageToken, pageSize, totalSize };
  }

  /** A page of one chat's tasks (a chat's id, or a context a client made), read whole from its object; a context no chat has: none. */
  private async chatTasks(contextId: string, filter: StatusFilter, after: number | undefined, pageToken: string, pageSize: number): Promise<TaskListPage> {
    const offset = pageToken ? offsetOf(pageToken) : 0;
    const context = await this.locator.context(contextId, false);
    const outcome = context ? await this.env.CHAT_ROOM.getByName(context.chatId).chainTasks(this.projectId) : undefined;
    if (outcome?.kind !== "tasks") return { tasks: [], nextPageToken: "", totalSize: 0 };
    const matching = (JSON.parse(outcome.tasks) as ChainAsTask[])
      .filter((task) => filter.matches(task))
      .filter((task) => after === undefined || task.enteredAt >= after)
      .sort((a, b) => b.enteredAt - a.enteredAt || (a.chain.rootId < b.chain.rootId ? -1 : 1));
    const next = offset + pageSize < matching.length ? tokenOf(offset + pageSize) : "";
    return { tasks: matching.slice(offset, offset + pageSize), nextPageToken: next, totalSize: matching.length };
  }

  /**
   * A page of the project's tasks across its chats, from the project's task index (it may lag a change by a few seconds):
   * the index orders and counts them, and each chat on the page answers for its tasks as they now stand, in one call.
   */
  private async projectTasks(filter: StatusFilter, after: number | undefined, pageToken: string, pageSize: number, withHistory: boolean): Promise<TaskListPage> {
    const from = pageToken ? keyOf(pageToken) : undefined;
    const found = await this.env.PROJECT_CHATS.getByName(this.projectId).taskPage({ ...filter.index, after, from, limit: pageSize });
    const byChat = Map.groupBy(found.tasks, (task) => task.chatId);
    const read = new Map<string, ChainAsTask>();
    await Promise.all(
      [...byChat].map(async ([chatId, tasks]) => {
        const outcome = await this.env.CHAT_ROOM.getByName(chatId).chainTasks(
          this.projectId,
          tasks.map((task) => task.taskId),
          withHistory,
        );
        if (outcome.kind === "tasks") for (const task of JSON.parse(outcome.tasks) as ChainAsTask[]) read.set(task.chain.rootId, task);
      }),
    );
    const tasks = found.tasks.flatMap((task) => read.get(task.taskId) ?? []);
    return { tasks, nextPageToken: found.next ? keyTokenOf(found.next) : "", totalSize: found.total };
  }
}

/** A page of tasks as a listing found them, before they are shown. */
type TaskListPage = { tasks: ChainAsTask[]; nextPageToken: string; totalSize: number };

// The chain states behind each A2A state; the two waits on a question tell apart by whether it asks for a connection.
const INDEXED_STATES = new Map<TaskState, TaskQuery["state"]>([
  [TaskState.TASK_STATE_SUBMITTED, "queued"],
  [TaskState.TASK_STATE_WORKING, "working"],
  [TaskState.TASK_STATE_COMPLETED, "completed"],
  [TaskState.TASK_STATE_FAILED, "failed"],
  [TaskState.TASK_STATE_REJECTED, "refused"],
  [TaskState.TASK_STATE_CANCELED, "cancelled"],
  [TaskState.TASK_STATE_INPUT_REQUIRED, "awaiting"],
  [TaskState.TASK_STATE_AUTH_REQUIRED, "awaiting"],
]);

/** A status filter, as a test of a task and as the index's query. */
type StatusFilter = { matches(task: ChainAsTask): boolean; index: Pick<TaskQuery, "state" | "connection"> };

function statusFilterOf(status: TaskState): StatusFilter {
  if (NO_STATUS_FILTER.has(status)) return { matches: () => true, index: {} };
  const state = INDEXED_STATES.get(status);
  if (!state) throw invalid("status", "is not a task state.");
  const connection = state === "awaiting" ? status === TaskState.TASK_STATE_AUTH_REQUIRED : undefined;
  return { matches: (task) => taskStateOf(task) === status, index: { state, connection } };
}

const BAD_TOKEN = () => invalid("pageToken", "is not one this server gave out.");

/** A page token's text; it is base64 so it reads as opaque. */
function tokenText(token: string): string {
  try {
    return atob(token);
  } catch {
    throw BAD_TOKEN();
  }
}

// A chat's tasks page by offset (the chat answers them whole); the project's by key, so a task that changes between pages is neither skipped nor shown twice.
const tokenOf = (offset: number) => btoa(`o:${offset}`).replaceAll("=", "");
function offsetOf(token: string): number {
  const offset = /^o:(\d{1,9})$/.exec(tokenText(token))?.[1];
  if (offset === undefined) throw BAD_TOKEN();
  return Number(offset);
}

const keyTokenOf = (key: TaskKey) => btoa(`k:${key.at}:${key.taskId}`).replaceAll("=", "");
function keyOf(token: string): TaskKey {
  const match = /^k:(\d{1,15}):([0-9a-f-]{36})$/.exec(tokenText(token));
  if (!match) throw BAD_TOKEN();
  return { at: Number(match[1]), taskId: match[2]! };
}
