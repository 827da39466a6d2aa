import { type Message as A2AMessage, type StreamResponse, TaskState } from "@a2a-js/sdk";
import type { ChatFollower, FollowedEvent } from "../channels/chat-follower";
import { waitOnChat } from "../channels/chat-wait";
import type { ChainAsTask } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import type { Message, QueueEntry } from "../chats/schemas";
import type { Served } from "../chats/service/chat-service";
import { EVENT_ID_EXTENSION, USAGE_EXTENSION } from "./card";
import { fromRefusal } from "./errors";
import { agentMessage, isInterrupted, isTerminal, questionMessage, replyArtifact, taskOf, taskStateOf, usageOf } from "./task-shape";

/**
 * How a feed reads its task (with the newest chat event id the read shows), a reply's text as of a chat event (null: no
 * longer kept), and checks the caller is still admitted.
 */
export type ChainFeed = {
  read(): Promise<{ task: ChainAsTask; eventId: number }>;
  replyTextAt(replyId: string, eventId: number): Promise<string | null>;
  stillAdmitted(): Promise<Served<null>>;
  sent: Map<string, A2AMessage>;
};

/** When the task entered `state`, if that is the state it is in now (a state it ended in, read again, gives its own time). */
const enteredIf = (task: ChainAsTask, state: TaskState) => (taskStateOf(task) === state ? new Date(task.enteredAt).toISOString() : undefined);

/** The metadata that names the chat event a stream event came from (for readers that drop SSE `id:` lines). */
const eventIdMetadata = (eventId: number) => ({ [EVENT_ID_EXTENSION]: { eventId: String(eventId) } });

/**
 * Waits until the task stops where it is (ended, or waiting on a question) or `stop` fires, reading it again after each
 * event that may have moved it (a reply's growth does not). Answers the task as it then stands; the feed throws its
 * refusals (a task no longer reachable, a credential revoked).
 */
export async function waitForTask(feed: ChainFeed, follower: ChatFollower, stop: AbortSignal, hungUp: AbortSignal): Promise<ChainAsTask> {
  const waited = await waitOnChat(
    follower,
    { stop, hungUp, stillAdmitted: () => feed.stillAdmitted() },
    {
      read: async () => ({ ok: true as const, body: (await feed.read()).task, replayed: false }),
      settled: (task) => isInterrupted(taskStateOf(task)),
      moves: (event) => event.type !== "message.delta" && event.type !== "snapshot",
    },
  );
  if (!waited.ok) throw fromRefusal(waited.problem);
  return waited.body;
}

/**
 * What the task's events look like to a follower of the chat's log: which submissions and replies are the task's, the
 * state it last entered, and each reply's text as this stream has told it. It reads only the events (and the task for a
 * failure's text or a cancel), so a replay from any event id tells exactly what a stream that was there told: every
 * state-changing event its status, a reply's start its text so far (append false), each growth an appended chunk, its
 * end the rest not yet told (append true), or the whole text when it does not begin with what was told.
 */
class TaskTrack {
  private readonly submissions: Set<string>;
  private readonly replies = new Set<string>();
  // Each reply's text as told: from the Task shown or the reply's start, then each chunk; a resumed stream learns its
  // start at the resume point when the reply ends (`sinceResume` holds the chunks told until then).
  private readonly told = new Map<string, string>();
  private readonly sinceResume = new Map<string, string>();
  state: TaskState | undefined;

  constructor(
    private readonly task: ChainAsTask,
    private readonly feed: ChainFeed,
    private readonly resumeAfter: number | undefined,
  ) {
    this.submissions = new Set(task.steps.map((step) => step.submission.id));
    for (const step of task.steps) if (step.reply) this.replies.add(step.reply.id);
  }

  /** A Task was shown: its replies' texts are what the chunks after it append to. */
  shown(task: ChainAsTask): void {
    for (const step of task.steps) if (step.reply) this.told.set(step.reply.id, step.reply.content);
  }

  /** A reply's end: the text not yet told (append), or the whole text when it does not begin with what was told. */
  private async ending(reply: Message): Promise<StreamResponse> {
    let told = this.told.get(reply.id);
    if (told === undefined && this.resumeAfter !== undefined) {
      const atResume = await this.feed.replyTextAt(reply.id, this.resumeAfter);
      if (atResume !== null) told = atResume + (this.sinceResume.get(reply.id) ?? "");
    }
    const rest = told !== undefined && reply.content.startsWith(told) ? reply.content.slice(told.length) : undefined;
    return rest === undefined ? this.artifact(reply.id, reply.content, false, true) : this.artifact(reply.id, rest, true, true);
  }

  private status(state: TaskState, message: A2AMessage | undefined, metadata: Record<string, unknown>, at?: string): StreamResponse {
    this.state = state;
    const { chain, contextId } = this.task;
    const taskId = chain.rootId;
    return { payload: { $case: "statusUpdate", value: { taskId, contextId, status: { state, message, timestamp: at ?? new Date().toISOString() }, metadata } } };
  }

  private artifact(replyId: string, text: string, append: boolean, lastChunk: boolean): StreamResponse {
    const { chain, contextId } = this.task;
    const taskId = chain.rootId;
    return { payload: { $case: "artifactUpdate", value: { taskId, contextId, artifact: replyArtifact(replyId, text), append, lastChunk, metadata: undefined } } };
  }

  /** The stream events one chat event becomes, in order (none when it is not the task's). */
  async take(event: FollowedEvent, current: () => Promise<ChainAsTask>): Promise<StreamResponse[]> {
    const out: StreamResponse[] = [];
    switch (event.type) {
      case "queue.entry": {
        const entry = JSON.parse(event.data) as QueueEntry;
        if (!this.submissions.has(entry.id)) break;
        if (entry.status === "queued" || entry.status === "steering") out.push(this.status(TaskState.TASK_STATE_SUBMITTED, undefined, {}, entry.createdAt));
        else if (entry.status === "dispatching") out.push(this.status(TaskState.TASK_STATE_WORKING, undefined, {}));
        else if (entry.status === "failed") {
          const task = await current();
          const failure = task.steps.find((step) => step.submission.id === entry.id)?.submission.failure;
          const message = failure ? agentMessage(this.task, entry.id, failure.message) : undefined;
          out.push(this.status(TaskState.TASK_STATE_REJECTED, message, { [USAGE_EXTENSION]: usageOf(task) }, enteredIf(task, TaskState.TASK_STATE_REJECTED)));
        }
        break;
      }
      case "queue.removed": {
        const { id } = JSON.parse(event.data) as { id: string };
        if (!this.submissions.has(id)) break;
        // Removed without starting: cancelled (a start or a steering text's take shows in its messages instead).
        const task = await current();
        if (task.steps.find((step) => step.submission.id === id)?.submission.status === "cancelled") {
          out.push(this.status(TaskState.TASK_STATE_CANCELED, undefined, {}, enteredIf(task, TaskState.TASK_STATE_CANCELED)));
        }
        break;
      }
      case "message": {
        const message = JSON.parse(event.data) as Message;
        if (message.role !== "owner" || message.submissionId === null || !this.submissions.has(message.submissionId)) break;
        this.replies.add(message.id);
        if (message.status === "working") {
          this.told.set(message.id, message.content);
          out.push(this.artifact(message.id, message.content, false, false));
          break;
        }
        // The reply's end: the rest of its text, then the state it leaves the task in; a question it asked follows as its
        // own event, which says so.
        out.push(await this.ending(message));
        if (message.questionId !== null && message.status === "success") break;
        const task = await current();
        const state =
          message.status === "failed" ? TaskState.TASK_STATE_FAILED : message.status === "interrupted_by_user" ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED;
        out.push(this.status(state, undefined, { [USAGE_EXTENSION]: usageOf(task) }, enteredIf(task, state)));
        break;
      }
      case "message.delta": {
        const delta = JSON.parse(event.data) as { id: string; text: string };
        if (!this.replies.has(delta.id)) break;
        const told = this.told.get(delta.id);
        if (told !== undefined) this.told.set(delta.id, told + delta.text);
        else this.sinceResume.set(delta.id, (this.sinceResume.get(delta.id) ?? "") + delta.text);
        out.push(this.artifact(delta.id, delta.text, true, false));
        break;
      }
      case "question": {
        const question = JSON.parse(event.data) as Question;
        if (!this.replies.has(question.messageId)) break;
        const taskId = this.task.chain.rootId;
        if ((question.status === "answered" || question.status === "declined") && question.submissionId !== null) {
          // Answered: the answer's submission goes on with the task, and its own events tell how.
          this.submissions.add(question.submissionId);
          break;
        }
        const usage = { [USAGE_EXTENSION]: usageOf(await current()) };
        const message = questionMessage(question, taskId, this.task.contextId);
        if (question.status === "pending") {
          const state = question.kind === "connection" ? TaskState.TASK_STATE_AUTH_REQUIRED : TaskState.TASK_STATE_INPUT_REQUIRED;
          out.push(this.status(state, message, usage, question.createdAt));
        } else if (question.status === "declined") out.push(this.status(TaskState.TASK_STATE_CANCELED, message, usage, question.closedAt ?? undefined));
        else out.push(this.status(TaskState.TASK_STATE_COMPLETED, message, usage, question.closedAt ?? undefined));
        break;
      }
    }
    return out;
  }
}

/** The event id goes on the last stream event a chat event became (in the payload's metadata; the route writes it as `id:` too). */
function stamped(responses: StreamResponse[], eventId: number): StreamResponse[] {
  const last = responses.at(-1)?.payload;
  if (last && last.$case !== "message") last.value.metadata = { ...last.value.metadata, ...eventIdMetadata(eventId) };
  return responses;
}

/** The event id a stream event carries in its JSON (`{ task | statusUpdate | artifactUpdate: { metadata } }`), if any: the route writes it as the SSE `id:`. */
export function eventIdOf(result: unknown): string | undefined {
  const [value] = Object.values((result ?? {}) as Record<string, { metadata?: Record<string, { eventId?: unknown }> }>);
  const eventId = value?.metadata?.[EVENT_ID_EXTENSION]?.eventId;
  return typeof eventId === "string" ? eventId : undefined;
}

/**
 * A task's stream: the Task first (unless it resumes after a chat event id), then the task's events from the chat's log in
 * order, each with its chat event id; it ends after the event that leaves the task ended or waiting on a question.
 * A resume point the log no longer keeps (its stream starts with a snapshot) gets a fresh Task first, as without one.
 */
export async function* streamTask(feed: ChainFeed, follower: ChatFollower, stop: AbortSignal, resumeAfter: number | undefined): AsyncGenerator<StreamResponse, void, undefined> {
  const first = await feed.read();
  const track = new TaskTrack(first.task, feed, resumeAfter);
  const current = async () => (await feed.read()).task;
  let shownUpTo: number | undefined;
  const showTask = async function* (read: { task: ChainAsTask; eventId: number }) {
    track.state = taskStateOf(read.task);
    track.shown(read.task);
    shownUpTo = read.eventId;
    yield { payload: { $case: "task" as const, value: taskOf(read.task, { metadata: eventIdMetadata(read.eventId), sent: feed.sent }) } };
  };
  if (resumeAfter === undefined) {
    yield* showTask(first);
    if (isInterrupted(taskStateOf(first.task))) return;
  } else if (resumeAfter >= first.eventId && isInterrupted(taskStateOf(first.task))) {
    // Resumed after everything there is, on a task that has stopped: nothing to replay, nothing to wait for.
    return;
  }
  // A task that had ended when it was read has no events after the chat's newest then: the replay ends there.
  const replayEnd = resumeAfter !== undefined && isTerminal(taskStateOf(first.task)) ? first.eventId : undefined;
  for (;;) {
    const event = await follower.next(stop);
    if (event === null) return;
    if (event.type === "snapshot") {
      // Without a resume point the snapshot only opens the stream; with one, the point was no longer kept.
      if (resumeAfter !== undefined && shownUpTo === undefined) {
        yield* showTask(await feed.read());
        if (isInterrupted(track.state!)) return;
      }
      continue;
    }
    if (shownUpTo !== undefined && event.id <= shownUpTo) continue;
    for (const response of stamped(await track.take(event, current), event.id)) yield response;
    if (track.state !== undefined && isInterrupted(track.state)) return;
    if (replayEnd !== undefined && event.id >= replayEnd) return;
  }
}
