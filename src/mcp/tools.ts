import { z } from "@hono/zod-openapi";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import {
  Chat,
  ChatList,
  ChatTitleBody,
  CreateChatHeaders,
  ForkBody,
  ForkHeaders,
  Forked,
  Message,
  MessagePage,
  MessagesQuery,
  Queue,
  SendMessageBody,
  SendMessageHeaders,
  Submission,
  SubmissionState,
} from "../chats/schemas";
import { ProjectCredits, ProjectUsage, UsageQuery } from "../credits/schemas";
import { Question } from "../chats/question-schemas";
import { ProjectList } from "../projects/schemas";
import { AnswerQuestionInput, AnswerQuestionOutput, answerQuestion } from "./answer-question";
import { idArgument, inChat, inProject } from "./arguments";
import { SendMessageInput, SendMessageOutput, sendMessage } from "./send-message";
import type { Tool, ToolContext } from "./tool-context";
import type { Served } from "../chats/service/chat-service";
import { parsed } from "../chats/service/parsed";

const tool = <I extends z.ZodType>(definition: Omit<Tool, "input" | "run"> & { input: I; run(args: z.output<I>, context: ToolContext): Promise<Served<unknown>> }) =>
  definition as Tool;

const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const ADDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const ENDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
// Approving lets the agent act: clients ask their person before calling it.
const DECIDES: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

const inSubmission = inChat.extend({ submissionId: idArgument("The submission's id, from send_message, steer or get_queue") });
const retryKey = <T extends z.ZodType>(header: T, what: string) =>
  header.optional().describe(`A UUID of your choosing: calling again with the same key and the same arguments ${what} instead of doing it twice.`);

export const TOOLS: Tool[] = [
  tool({
    name: "list_projects",
    title: "List projects",
    description:
      "Lists the projects this token can use, each with its id, name and your role (owner and editor may write, viewer only reads). Call it first: every other tool needs a projectId from here.",
    input: z.strictObject({}),
    output: ProjectList,
    annotations: READS,
    run: (_, { chats }) => chats.projects(),
  }),
  tool({
    name: "list_chats",
    title: "List chats",
    description:
      "Lists a project's chats, most recently updated first, with each chat's title, whether its agent is working and a preview of its latest reply. archived: true lists the archived ones instead.",
    input: inProject.extend({ archived: z.boolean().optional().describe("true for archived chats; active chats when left out") }),
    output: ChatList,
    annotations: READS,
    run: async ({ projectId, archived }, { chats }) => parsed(await chats.chats(projectId, archived === true)),
  }),
  tool({
    name: "create_chat",
    title: "Create a chat",
    description: "Creates an empty chat in a project and returns it; send it work with send_message. Needs the owner or editor role.",
    input: inProject.extend({ ...ChatTitleBody.shape, idempotencyKey: retryKey(CreateChatHeaders.shape["idempotency-key"], "returns the chat it created") }),
    output: Chat,
    annotations: ADDS,
    run: async ({ projectId, title, idempotencyKey }, { chats }) => parsed(await chats.createChat(projectId, title, idempotencyKey)),
  }),
  tool({
    name: "fork_chat",
    title: "Fork a chat",
    description:
      "Makes a new chat that starts as a copy of a chat's history up to and including atMessageId, to try another direction and keep the first. " +
      "rerun: true with a user message (one that began a task) copies what came before it and sends that message again in the fork: another answer " +
      "(a task; it costs credits; its submissionId is returned). To edit what was asked, fork at the message before it and send the new text. Needs the owner or editor role.",
    input: inChat.extend({
      ...ForkBody.shape,
      idempotencyKey: retryKey(ForkHeaders.shape["idempotency-key"], "returns the fork it made"),
    }),
    output: Forked,
    annotations: ADDS,
    run: ({ projectId, chatId, idempotencyKey, ...body }, { chats }) => chats.fork({ projectId, chatId }, idempotencyKey ?? crypto.randomUUID(), body),
  }),
  tool({
    name: "get_chat",
    title: "Read a chat",
    description:
      "Reads one chat: its title, whether its agent is working (isWorking), waiting for an answer from you (isAwaitingUser), how many messages wait in its queue, and a preview of its latest reply.",
    input: inChat,
    output: Chat,
    annotations: READS,
    run: ({ projectId, chatId }, { chats }) => chats.getChat({ projectId, chatId }),
  }),
  tool({
    name: "send_message",
    title: "Send a message",
    description:
      "Sends a message to a chat's agent, which works on it asynchronously (a task; it costs credits). Returns the submission, its state and the agent's reply so far. " +
      "Give waitSeconds (up to 60) to wait for the reply to finish; the reply's text arrives as progress while it grows. If the wait ends first, follow up with get_submission and read_messages. " +
      "To retry safely after an error, pass the same idempotencyKey: a retry then returns the first answer (replayed: true) instead of sending twice.",
    input: SendMessageInput,
    output: SendMessageOutput,
    annotations: ADDS,
    run: sendMessage,
  }),
  tool({
    name: "get_question",
    title: "Read a question",
    description:
      "Reads a question the agent asked (a chat's pendingQuestionId, a reply's questionId): its prompt, kind (text, choice with options, approval of an action, " +
      "connection at a url), status and, once closed, its answer. Answer a pending one with answer_question.",
    input: inChat.extend({ questionId: idArgument("The question's id: the chat's pendingQuestionId, or a reply's questionId") }),
    output: Question,
    annotations: READS,
    run: async ({ projectId, chatId, questionId }, { chats }) => parsed(await chats.question({ projectId, chatId }, questionId)),
  }),
  tool({
    name: "answer_question",
    title: "Answer a question",
    description:
      "Answers the agent's pending question: a message to the agent (a task; it costs credits). Approving lets the agent act: ask your person first. " +
      "Returns what send_message returns, for the agent's next reply; waitSeconds (up to 60) waits for it.",
    input: AnswerQuestionInput,
    output: AnswerQuestionOutput,
    annotations: DECIDES,
    run: answerQuestion,
  }),
  tool({
    name: "read_messages",
    title: "Read messages",
    description:
      "Reads a chat's messages, newest first: yours (role user), the agent's replies (role owner, status working, success, failed or interrupted_by_user) and errors. " +
      "Pass the answer's nextCursor as cursor to read older ones; it is null on the last page.",
    input: inChat.extend({ limit: z.number().int().min(1).max(100).default(20).describe("How many messages, 1 to 100"), cursor: MessagesQuery.shape.cursor }),
    output: MessagePage,
    annotations: READS,
    run: ({ projectId, chatId, limit, cursor }, { chats }) => chats.messages({ projectId, chatId }, cursor, limit),
  }),
  tool({
    name: "get_queue",
    title: "Read the queue",
    description: "Lists a chat's submissions that wait for the agent (queued, steering), are being handed to it (dispatching) or could not start (failed), in order.",
    input: inChat,
    output: Queue,
    annotations: READS,
    run: ({ projectId, chatId }, { chats }) => chats.queue({ projectId, chatId }),
  }),
  tool({
    name: "get_submission",
    title: "Read a submission",
    description:
      "Says what a submission (from send_message or steer) became: its status (queued, steering, dispatching, running, done, failed, cancelled), its task, and the ids of its user message and the agent's reply (null until they exist).",
    input: inSubmission,
    output: SubmissionState,
    annotations: READS,
    run: ({ projectId, chatId, submissionId }, { chats }) => chats.submission({ projectId, chatId }, submissionId),
  }),
  tool({
    name: "stop_reply",
    title: "Stop a reply",
    description:
      "Stops an agent reply that is still working: it ends at once as interrupted_by_user, keeping what it had written, and the next queued message runs. Returns the reply. A reply that already ended is returned as it is, so calling again is safe.",
    input: inChat.extend({ messageId: idArgument("The id of an agent reply (role owner), from read_messages or get_submission's replyMessageId") }),
    output: Message,
    annotations: ENDS,
    run: ({ projectId, chatId, messageId }, { chats }) => chats.stopReply({ projectId, chatId }, messageId),
  }),
  tool({
    name: "cancel_submission",
    title: "Cancel a submission",
    description:
      "Removes a submission that has not started (queued, steering or failed) from the queue for good: it never runs and costs nothing. One that has started answers submission_started; stop its reply with stop_reply instead.",
    input: inSubmission,
    output: z.object({ cancelled: z.literal(true) }),
    annotations: ENDS,
    run: async ({ projectId, chatId, submissionId }, { chats }) => {
      const answer = await chats.cancelSubmission({ projectId, chatId }, submissionId);
      return answer.ok ? { ...answer, body: { cancelled: true } } : answer;
    },
  }),
  tool({
    name: "steer",
    title: "Steer the running task",
    description:
      "Gives the agent's running task an extra instruction it takes at its next step (at most 5 per task), without starting a new task. With no task running it is sent like a message. Returns the submission; follow it with get_submission.",
    input: inChat.extend({ content: SendMessageBody.shape.content, idempotencyKey: retryKey(SendMessageHeaders.shape["idempotency-key"], "returns the first answer") }),
    output: Submission,
    annotations: ADDS,
    run: ({ projectId, chatId, content, idempotencyKey }, { chats }) =>
      chats.submit({ projectId, chatId }, { kind: "steer", content, replyToMessageId: null, idempotencyKey: idempotencyKey ?? crypto.randomUUID() }),
  }),
  tool({
    name: "get_credits",
    title: "Read the project's credits",
    description:
      "Says whether a task can run now (canRun), what one task costs (taskCost) and, for the project's owner only, the balance that pays for its tasks (null for other roles). Check it when a reply failed with insufficient credits or before sending much work.",
    input: inProject,
    output: ProjectCredits,
    annotations: READS,
    run: ({ projectId }, { chats }) => chats.credits(projectId),
  }),
  tool({
    name: "get_usage",
    title: "Read the project's usage",
    description:
      "Lists, per UTC day, how many of the project's tasks ended and what they cost in credits and model tokens, oldest first; only days with tasks appear. from and to are inclusive dates (YYYY-MM-DD); by default the last 30 days.",
    input: inProject.extend(UsageQuery.shape),
    output: ProjectUsage,
    annotations: READS,
    run: ({ projectId, from, to }, { chats }) => chats.usage(projectId, { from, to }),
  }),
];

const byName = new Map(TOOLS.map((t) => [t.name, t]));
export const toolNamed = (name: string): Tool | undefined => byName.get(name);
