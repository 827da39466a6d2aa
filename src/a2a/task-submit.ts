import { type Message as A2AMessage, Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError } from "@a2a-js/sdk/errors";
import { CONTENT_MAX } from "../agent/limits";
import { Answer } from "../agent/question-shapes";
import type { ChatFollower } from "../channels/chat-follower";
import type { NewPushConfig } from "../chats/room-calls";
import type { Submission } from "../chats/schemas";
import type { ChatService } from "../chats/service/chat-service";
import { submissionIdOf } from "../chats/submission-ids";
import { sha256, toHex } from "../crypto";
import type { Env } from "../env";
import { invalidPart } from "../http/problem";
import { nameUuid } from "../ids";
import { answerFromText } from "./answers";
import { fromRefusal, invalid, malformed, unsupported } from "./errors";
import { pushConfigOf } from "./push-configs";
import type { TaskLocator, TaskRef } from "./task-locator";
import { isInterrupted, taskStateOf } from "./task-shape";

// The namespace of the chat keys A2A messages are sent under: a name-based UUID of the project, the account and the messageId.
const MESSAGE_KEY_NAMESPACE = "2b7d9e41-6c3a-4f58-9d2e-8a1b4c7f0e63";
const MESSAGE_ID_MAX = 128;
const TITLE_MAX = 160;
const TEXT_MODES = new Set(["text/plain", "text/*", "*/*"]);
// A context a client makes: 1 to 256 visible ASCII characters.
const CONTEXT_ID = /^[\x21-\x7e]{1,256}$/;

/** What a send asks of the chat, read from the A2A message: its text, or the data part that answers a question. */
type Content = { text: string; data: unknown | undefined };

const dataOutsideAnswer = () => new ContentTypeNotSupportedError({ message: "A data part answers a question, nothing else." });

/** A chat's title from a message's text: its first line, whitespace collapsed, 160 code points at most. */
function titleOf(text: string): string {
  const line = (text.split(/\r?\n/)[0] ?? "").replace(/\s+/g, " ").trim();
  return [...line].slice(0, TITLE_MAX).join("") || "A2A task";
}

/** What a submit works with: the project's chats and tasks for its caller, and the agent's own stream and push configs. */
type SubmitParts = {
  env: Env;
  projectId: string;
  accountId: string;
  chats: ChatService;
  tasks: TaskLocator;
  protocol: NewPushConfig["protocol"];
  follow(chatId: string): Promise<ChatFollower>;
  addPushConfig(ref: TaskRef, config: NewPushConfig, announce: boolean): Promise<unknown>;
};

/** What a submitted message made: its task, the stream followed for it (when asked), and a new task's disposition. */
export type Submitted = { ref: TaskRef; contextId: string; follower: ChatFollower | undefined; accepted?: Submission["disposition"] };

/**
 * SendMessage's idempotent submit, for a caller with write access to the project: the message's messageId is its key, so
 * the same message again is the same task, also when two run at once.
 */
export class TaskSubmit {
  constructor(private readonly parts: SubmitParts) {}

  private chat(chatId: string) {
    return { projectId: this.parts.projectId, chatId };
  }

  /**
   * Sends the message where its ids say: a new chat, a chat (contextId), or the task (taskId), answering its question or
   * steering its work by its state. messageId is the key: the same message again is the same task. With `follow`, the
   * chat's stream is opened before anything is sent, so a caller with no stream place free sends nothing.
   */
  async submit(params: SendMessageRequest, follow: boolean): Promise<Submitted> {
    const { env, projectId, accountId, tasks } = this.parts;
    const message = params.message;
    if (!message) throw invalid("message", "is required.");
    const content = contentOf(message, params.configuration?.acceptedOutputModes ?? []);
    const sentConfig = params.configuration?.taskPushNotificationConfig;
    const pushConfig = sentConfig ? await pushConfigOf(sentConfig, env, this.parts.protocol) : undefined;
    const named = message.taskId ? await tasks.locate(message.taskId) : undefined;
    if (!named && content.data !== undefined) throw dataOutsideAnswer();
    if (content.data === undefined && (content.text.length < 1 || content.text.length > CONTENT_MAX)) {
      throw invalid("message.parts", `must hold 1 to ${CONTENT_MAX} characters of text.`);
    }
    const key = await nameUuid(MESSAGE_KEY_NAMESPACE, `${projectId}/${accountId}/${message.messageId}`);
    const fingerprint = toHex(await sha256(JSON.stringify({ parts: message.parts, contextId: message.contextId || null, taskId: message.taskId || null })));
    // The chat the contextId names (a chat's id, or a context a client made: one made now when it is new and no task is named).
    const contextId = message.contextId || undefined;
    if (contextId !== undefined && !CONTEXT_ID.test(contextId)) throw invalid("message.contextId", "must be 1 to 256 visible ASCII characters.");
    const context = contextId === undefined ? undefined : await tasks.context(contextId, !named);
    if (named && contextId && context?.chatId !== named.chatId) throw invalid("message.taskId", "names a task of another chat than contextId.");
    // What this message will make, fixed before anything is sent (a submission's id is its chat's and its key's): claimed
    // with the key in one call, which also records the task's chat, so the task can be found the moment it exists.
    const proposedChat = named?.chatId ?? context?.chatId ?? crypto.randomUUID();
    const submissionId = await submissionIdOf(proposedChat, key);
    const proposed = { chatId: proposedChat, taskId: named?.taskId ?? submissionId, submissionId, message: JSON.stringify(message) };
    const chats = env.PROJECT_CHATS.getByName(projectId);
    let claim = await chats.claimMessageKey(key, fingerprint, proposed);
    // A messageId is taken by a message that was accepted: one whose send was refused (nothing made) leaves it free.
    if (claim.kind === "conflict" && !(await tasks.exists(claim.chatId, claim.submissionId))) claim = await chats.claimMessageKey(key, fingerprint, proposed, true);
    if (claim.kind === "conflict") throw malformed("This messageId was used for another message.", "idempotency_key_reused");
    const made = claim.kind === "replay" ? claim : proposed;
    const { chatId, taskId } = made;
    tasks.remember(taskId, chatId);
    if (!named && !context?.exists) {
      // Creating is idempotent in the chat's object: a retry, or another first send to a new context, creates nothing twice.
      await env.CHAT_ROOM.getByName(chatId).create(chatId, projectId, titleOf(content.text), contextId ?? null);
    }
    // The context the chat's tasks show: one a client made, as sent, else the chat's id.
    const shownContext = context?.shown ?? chatId;
    const follower = follow ? await this.parts.follow(chatId) : undefined;
    // The same message again: the task as it now stands, once its first send landed (else it is sent now, as the first would).
    const landed = async () => claim.kind === "replay" && (await tasks.exists(chatId, made.submissionId));
    try {
      const sent = new Map(named?.sent ?? []).set(made.submissionId, message);
      const ref = { chatId, taskId, sent };
      if (await landed()) return { ref: await tasks.locate(taskId), contextId: shownContext, follower };
      try {
        if (named) {
          await this.continueTask(named, content, key);
          if (pushConfig) await this.parts.addPushConfig(ref, pushConfig, false);
          return { ref, contextId: shownContext, follower };
        }
        const accepted = await this.send(chatId, content, key);
        // The task exists now: its config pushes its state as it stands, then every change.
        if (pushConfig) await this.parts.addPushConfig(ref, pushConfig, true);
        return { ref, contextId: shownContext, follower, accepted };
      } catch (error) {
        // A retry racing its first send: the first landed meanwhile (and moved the task on), so this one is its replay.
        if (await landed()) return { ref: await tasks.locate(taskId), contextId: shownContext, follower };
        throw error;
      }
    } catch (error) {
      follower?.close();
      throw error;
    }
  }

  private async send(chatId: string, content: Content, key: string): Promise<Submission["disposition"]> {
    const sent = await this.parts.chats.submit(this.chat(chatId), { kind: "send", idempotencyKey: key, content: content.text, replyToMessageId: null, ifBusy: "queue" });
    if (!sent.ok) throw fromRefusal(sent.problem);
    return sent.body.disposition;
  }

  /** A message to a task: the answer to the question it waits on, or steering for its work; any other state takes none. */
  private async continueTask(ref: TaskRef, content: Content, key: string): Promise<void> {
    const { chatId } = ref;
    const { task } = await this.parts.tasks.read(ref);
    const state = taskStateOf(task);
    if ((state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) && task.chain.question) {
      let answer: unknown = content.data;
      if (answer === undefined) {
        const read = answerFromText(task.chain.question, content.text);
        if (read.kind === "unfit") throw malformed(read.why, "answer_does_not_fit");
        answer = read.answer;
      }
      // Held to the schema an answer's body is held to on /v1.
      const parsed = Answer.safeParse(answer);
      if (!parsed.success) throw fromRefusal(invalidPart(parsed.error));
      const answered = await this.parts.chats.submit(this.chat(chatId), { kind: "answer", idempotencyKey: key, questionId: task.chain.question.id, answer: parsed.data });
      if (!answered.ok) throw fromRefusal(answered.problem);
      return;
    }
    if (state === TaskState.TASK_STATE_WORKING) {
      if (content.data !== undefined) throw dataOutsideAnswer();
      const steered = await this.parts.chats.submit(this.chat(chatId), { kind: "steer", idempotencyKey: key, content: content.text, replyToMessageId: null });
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
