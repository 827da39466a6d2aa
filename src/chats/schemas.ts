import { z } from "@hono/zod-openapi";
import { pageQuery } from "../http/query";
import { characters } from "../text";
import { PathId } from "../ids";
import { ProjectParams } from "../projects/schemas";
import { CONTENT_MAX } from "../agent/limits";

const TITLE_MAX = 160;
export const PREVIEW_MAX = 500;
// The largest valid message body: every character of the content sent as a 12-byte "\uXXXX\uXXXX"
// escape pair, plus room for the id, the keys (which may be escaped too) and whitespace.
export const MESSAGE_BODY_LIMIT_BYTES = CONTENT_MAX * 12 + 16 * 1024;

const Title = characters(1, TITLE_MAX, "title");
export const ChatTitleBody = z.strictObject({ title: Title }).openapi("ChatTitle");

export const SendMessageBody = z
  .strictObject({
    content: characters(1, CONTENT_MAX, "content"),
    replyToMessageId: z.uuid().optional().openapi({ description: "The id of a message of this chat that this one answers; any other id is refused with 400" }),
  })
  .openapi("SendMessage");

const ForkedFrom = z
  .object({ chatId: z.uuid().openapi({ description: "The chat it was forked from" }), messageId: z.uuid().openapi({ description: "The message it was forked at" }) })
  .openapi("ForkedFrom");

export const Chat = z
  .object({
    id: z.uuid(),
    title: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    archivedAt: z.iso.datetime().nullable(),
    lastMessageAt: z.iso.datetime().nullable(),
    latestAgentPreview: z.string().max(PREVIEW_MAX),
    isAwaitingUser: z.boolean().openapi({ description: "True exactly while a question the agent asked is pending (pendingQuestionId)" }),
    pendingQuestionId: z.uuid().nullable().openapi({ description: "The question the agent waits for you to answer (GET …/questions/{questionId}); null when none is pending" }),
    isWorking: z.boolean(),
    queuedCount: z.number().int().min(0),
    forkedFrom: ForkedFrom.nullable().openapi({ description: "The chat and message this chat was forked at; null for a chat that is no fork" }),
  })
  .openapi("Chat");
export type Chat = z.infer<typeof Chat>;

export const ChatList = z.object({ items: z.array(Chat) }).openapi("ChatList");
export type ChatList = z.infer<typeof ChatList>;

export const Usage = z
  .object({
    credits: z.number().int().min(0).openapi({ description: "What the task cost once any refund is made: a failed task 0, a stopped one what was charged" }),
    inputTokens: z.number().int().min(0).nullable().openapi({ description: "The model's prompt tokens, summed over the task's calls that reported them; null when none did" }),
    outputTokens: z.number().int().min(0).nullable().openapi({ description: "The model's completion tokens, summed like inputTokens" }),
  })
  .openapi("Usage", { description: "What an ended agent reply's task cost, fixed when it ended" });
export type Usage = z.infer<typeof Usage>;

export const Message = z
  .object({
    id: z.uuid(),
    role: z.enum(["owner", "error", "user"]),
    content: z.string(),
    createdAt: z.iso.datetime(),
    status: z.enum(["working", "success", "failed", "interrupted_by_user"]).nullable(),
    taskId: z.uuid().nullable().openapi({ description: "The task this message belongs to: its user message, its reply, its error, and the steering texts it took" }),
    submissionId: z.uuid().nullable().openapi({
      description: "The submission whose task produced it; a steering text's user message carries its own submission's id. Null for messages from before submissions were linked.",
    }),
    usage: Usage.nullable().openapi({ description: "On an agent reply that has ended; null for user and error messages, a working reply, and replies from before usage was kept" }),
    questionId: z.uuid().nullable().openapi({ description: "On an agent reply that asks: the question it asked (GET …/questions/{questionId}); null on every other message" }),
  })
  .openapi("Message");
export type Message = z.infer<typeof Message>;

export const MessagePage = z
  .object({ items: z.array(Message), nextCursor: z.string().nullable().openapi({ description: "Opaque; send it as cursor for the next, older page; null on the last page" }) })
  .openapi("MessagePage");

export const QueueEntry = z
  .object({
    id: z.uuid(),
    content: z.string(),
    status: z.enum(["dispatching", "failed", "queued", "steering"]),
    createdAt: z.iso.datetime(),
  })
  .openapi("QueueEntry");
export type QueueEntry = z.infer<typeof QueueEntry>;

export const Queue = z.object({ items: z.array(QueueEntry).openapi({ description: "In the order the entries will run" }) }).openapi("Queue");

/** A queue.entry event: the entry, and where it stands in the run order. */
export const QueueEntryChange = QueueEntry.extend({
  before: z.uuid().nullable().openapi({ description: "The entry it now precedes in the run order, or null when it is last: a follower inserts or moves it there" }),
}).openapi("QueueEntryChange");
export type QueueEntryChange = z.infer<typeof QueueEntryChange>;

/** What a send does when the chat is busy (a task running or dispatching, or an entry queued or steering). */
export const IF_BUSY = ["queue", "steer", "interrupt", "reject"] as const;
export type IfBusy = (typeof IF_BUSY)[number];

/** Why a submission could not run. */
const SUBMISSION_FAILURES = ["insufficient_credits", "token_credit_limit"] as const;
export type SubmissionFailure = (typeof SUBMISSION_FAILURES)[number];

export const Submission = z.object({ submissionId: z.uuid(), chatId: z.uuid(), disposition: z.enum(["queued", "started"]) }).openapi("Submission");
export type Submission = z.infer<typeof Submission>;

export const SubmissionState = z
  .object({
    id: z.uuid(),
    status: z.enum(["queued", "steering", "dispatching", "running", "done", "failed", "cancelled"]).openapi({
      description:
        "`done`: its task ended, whatever the reply's status (a steering text: taken by the running task); `failed`: it could not start (no credits); `cancelled`: removed from the queue by a user",
    }),
    taskId: z.uuid().nullable().openapi({ description: "Its task, or for a steering text the running task that took it; null until assigned" }),
    userMessageId: z.uuid().nullable().openapi({ description: "The user message its text became; null until its task starts (or the running task takes it)" }),
    replyMessageId: z.uuid().nullable().openapi({ description: "The agent reply of its task; null until the task starts" }),
    createdAt: z.iso.datetime(),
    credits: z
      .object({ charged: z.number().int().min(0), refunded: z.number().int().min(0) })
      .openapi({ description: "What its task was charged and, when it failed, given back (both 0 until dispatched, and for a steering text a running task took)" }),
    failure: z
      .object({
        code: z.enum(SUBMISSION_FAILURES).openapi({ description: "Why it could not run; accept other codes too" }),
        message: z.string().openapi({ description: "The text of its error message" }),
      })
      .nullable()
      .openapi({ description: "Set when status is failed: why it never ran" }),
    ifBusy: z.enum(IF_BUSY).openapi({
      description: "How it was to join a busy chat, as accepted: the send's If-Busy (`queue` when absent), `steer` for POST …/steer, `queue` for an answer",
    }),
  })
  .openapi("SubmissionState", { description: "What a submission became" });
export type SubmissionState = z.infer<typeof SubmissionState>;

/** The demo project that local development seeds (npm run dev): the reference's try-it works against it as it stands. */
export const ChatParams = ProjectParams.extend({ chatId: PathId });
export const MessageParams = ChatParams.extend({ messageId: PathId });
export const SubmissionParams = ChatParams.extend({ submissionId: PathId });
// Stopping takes no input: no body, an empty one, or {}.
export const StopBody = z.strictObject({}).openapi("StopReply");
// The default is stated so that the reference's try-it starts from the active chats, not from an empty archive.
export const ListChatsQuery = z.strictObject({
  archived: z.enum(["true", "false"]).optional().openapi({ default: "false", description: "true lists the archived chats instead of the active ones" }),
});
export const MessagesQuery = pageQuery("messages");
/** A key the client makes (crypto.randomUUID()), one per intended thing; a missing required one says so, not that it is no UUID. */
const idempotencyKey = (intended: string) =>
  z
    .uuid({ error: (issue) => (issue.input === undefined ? `required: a UUID, one per intended ${intended}` : `must be a UUID, one per intended ${intended}`) })
    .overwrite((key) => key.toLowerCase());
export const CreateChatHeaders = z.object({ "idempotency-key": idempotencyKey("chat").optional() });
export const SendMessageHeaders = z.object({ "idempotency-key": idempotencyKey("message") });
export const ForkHeaders = z.object({ "idempotency-key": idempotencyKey("fork") });

export const ForkBody = z
  .strictObject({
    atMessageId: z.uuid().openapi({ description: "A message of this chat: the fork holds the history up to and including it (with rerun, up to just before it)" }),
    title: Title.optional().openapi({ description: "The fork's title; by default the source's with \" (fork)\" appended, cut to 160 code points" }),
    rerun: z.boolean().optional().openapi({
      description: "With a user message with which a task began: copy what came before it, then send its content to the fork as a new submission (another answer)",
    }),
  })
  .openapi("ForkChat");
export type ForkBody = z.infer<typeof ForkBody>;

export const Forked = z
  .object({
    chat: Chat,
    submissionId: z.uuid().nullable().openapi({ description: "The rerun's submission in the fork; null without rerun" }),
  })
  .openapi("Forked");
export type Forked = z.infer<typeof Forked>;

/**
 * One If-Busy value, case-insensitive, spaces around ignored; repeated headers arrive joined with ", ", and a
 * list is that value only when all its members are the same.
 */
const IfBusyHeader = z
  .string()
  .transform((raw, ctx) => {
    const values = new Set(raw.split(",").map((v) => v.trim().toLowerCase()));
    const [value] = values;
    if (values.size === 1 && IF_BUSY.includes(value as IfBusy)) return value as IfBusy;
    ctx.addIssue({ code: "custom", message: `If-Busy must be one of ${IF_BUSY.join(", ")} (given once)` });
    return z.NEVER;
  })
  .openapi({
    type: "string",
    enum: [...IF_BUSY],
    description:
      "What the send does when the chat is busy (a task running or dispatching, or an entry queued or steering): `queue` (the default) waits its turn; " +
      "`steer` is taken by the running task as POST …/steer; `interrupt` stops the working reply (as POST …/stop) and runs ahead of every pending entry; " +
      "`reject` answers 409 `chat_busy`, storing nothing and leaving the key free. On an idle chat every value sends as `queue`. Case-insensitive.",
  });
export const SendWithIfBusyHeaders = SendMessageHeaders.extend({ "if-busy": IfBusyHeader.optional() });

// ---- the event stream (text/event-stream): each frame is `id: <n>`, `event: <type>` and one `data:` line of JSON ----
const ResumePoint = z.string().regex(/^[0-9]+$/, "a resume point is a non-negative integer: the id of the last event received");
export const EventsQuery = z.strictObject({ after: ResumePoint.optional().openapi({ description: "Resume after this event id (Last-Event-ID wins when both are sent)" }) });
export const EventsHeaders = z.object({
  "last-event-id": ResumePoint.optional().openapi({ description: "Resume after this event id, as EventSource sends it when it reconnects" }),
});
