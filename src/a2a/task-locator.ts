import type { Message as A2AMessage } from "@a2a-js/sdk";
import type { ChainAsTask } from "../chats/chain-schemas";
import type { ContextChat } from "../chats/list/project-chats";
import type { Env } from "../env";
import { isUuid } from "../ids";
import { taskNotFound } from "./errors";

/** A task as A2A names it: its chat, its root submission, and the messages A2A sent into it (by submission), shown as sent. */
export type TaskRef = { chatId: string; taskId: string; sent: Map<string, A2AMessage> };

// Which chat each task is in, as this isolate has learnt it (it never changes): at most this many, the oldest forgotten first.
const TASK_CHATS_KEPT = 10_000;
const taskChats = new Map<string, string>();
// Which chat each A2A context names, once the chat exists (that never changes either): as many, kept the same way.
const contextChats = new Map<string, { chatId: string; shown: string }>();

const remembered = <T>(map: Map<string, T>, key: string, value: T) => {
  map.set(key, value);
  if (map.size > TASK_CHATS_KEPT) map.delete(map.keys().next().value!);
};

/**
 * Where a project's tasks are: the chat a task is in (its project's chat list records it with the message's key, so a
 * task can be found the moment it exists), and the task as its chat's object has it. The caller has checked access.
 */
export class TaskLocator {
  constructor(
    private readonly env: Env,
    private readonly projectId: string,
  ) {}

  /** Which chat a task is in never changes, so this isolate remembers it. */
  remember(taskId: string, chatId: string): void {
    remembered(taskChats, `${this.projectId}/${taskId}`, chatId);
  }

  /**
   * The chat a contextId names (a chat's id, or a context a client made); with `make`, a context no chat has yet gets
   * one (the caller creates it while `exists` is false). Null: no chat, and not made.
   */
  async context(contextId: string, make: boolean): Promise<ContextChat | null> {
    const key = `${this.projectId}\n${contextId}`;
    const known = contextChats.get(key);
    if (known) return { ...known, exists: true };
    const found = await this.env.PROJECT_CHATS.getByName(this.projectId).contextChat(this.projectId, contextId, make);
    if (found?.exists) remembered(contextChats, key, { chatId: found.chatId, shown: found.shown });
    return found;
  }

  /** The chat a task is in and (unless told they are not needed) the messages A2A sent into it. */
  async locate(taskId: string, withSent = true): Promise<TaskRef> {
    if (!isUuid(taskId)) throw taskNotFound();
    const id = taskId.toLowerCase();
    const known = taskChats.get(`${this.projectId}/${id}`);
    if (known && !withSent) return { chatId: known, taskId: id, sent: new Map() };
    const entry = await this.env.PROJECT_CHATS.getByName(this.projectId).taskEntry(id);
    if (!entry) throw taskNotFound();
    this.remember(id, entry.chatId);
    // Kept in the SDK's own shape (text and data parts only, so plain JSON), which its transport serialises.
    const sent = new Map(entry.sent.map(({ submissionId, message }) => [submissionId, JSON.parse(message) as A2AMessage]));
    return { chatId: entry.chatId, taskId: id, sent };
  }

  /** A task as its chat's object has it, with the newest event id it shows; a submission that leads no task is not found. */
  async read({ chatId, taskId }: TaskRef, withHistory = true): Promise<{ task: ChainAsTask; eventId: number }> {
    const outcome = await this.env.CHAT_ROOM.getByName(chatId).chainTask(this.projectId, taskId, withHistory);
    if (outcome.kind !== "task") throw taskNotFound();
    const task = JSON.parse(outcome.task) as ChainAsTask;
    if (!task.isTask) throw taskNotFound();
    return { task, eventId: outcome.eventId };
  }

  /** Whether a claimed message's submission is there (one whose send was refused made none). */
  async exists(chatId: string, submissionId: string): Promise<boolean> {
    const outcome = await this.env.CHAT_ROOM.getByName(chatId).submissionState(this.projectId, submissionId);
    return outcome.kind === "submission";
  }
}
