import { z } from "@hono/zod-openapi";

export const TITLE_MAX = 160;
export const CONTENT_MAX = 100_000;
export const PREVIEW_MAX = 500;

// Limits count characters (code points), so an emoji is one character, not two UTF-16 units.
const characters = (min: number, max: number, what: string) =>
  z
    .string()
    .refine((s) => {
      const n = [...s].length;
      return n >= min && n <= max;
    }, `${what} must be ${min} to ${max} characters`)
    .openapi({ minLength: min, maxLength: max });

export const Title = characters(1, TITLE_MAX, "title");
export const ChatTitleBody = z.strictObject({ title: Title }).openapi("ChatTitle");

export const SendMessageBody = z
  .strictObject({
    content: characters(1, CONTENT_MAX, "content"),
    replyToMessageId: z.uuid().optional(),
  })
  .openapi("SendMessage");

export const Chat = z
  .object({
    id: z.uuid(),
    title: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    archivedAt: z.iso.datetime().nullable(),
    lastMessageAt: z.iso.datetime().nullable(),
    latestAgentPreview: z.string().max(PREVIEW_MAX),
    isAwaitingUser: z.boolean(),
    isWorking: z.boolean(),
    queuedCount: z.number().int().min(0),
  })
  .openapi("Chat");
export type Chat = z.infer<typeof Chat>;

export const ChatList = z.object({ items: z.array(Chat) }).openapi("ChatList");

export const Message = z
  .object({
    id: z.uuid(),
    role: z.enum(["owner", "error", "user"]),
    content: z.string(),
    createdAt: z.iso.datetime(),
    status: z.enum(["working", "success", "failed", "interrupted_by_user"]).nullable(),
    taskId: z.uuid().nullable(),
  })
  .openapi("Message");
export type Message = z.infer<typeof Message>;

export const MessagePage = z.object({ items: z.array(Message), nextCursor: z.string().nullable() }).openapi("MessagePage");

export const QueueEntry = z
  .object({
    id: z.uuid(),
    content: z.string(),
    status: z.enum(["dispatching", "failed", "queued", "steering"]),
    createdAt: z.iso.datetime(),
  })
  .openapi("QueueEntry");
export type QueueEntry = z.infer<typeof QueueEntry>;

export const Queue = z.object({ items: z.array(QueueEntry) }).openapi("Queue");

export const Submission = z
  .object({ submissionId: z.uuid(), chatId: z.uuid(), disposition: z.enum(["queued", "started"]) })
  .openapi("Submission");
export type Submission = z.infer<typeof Submission>;

export const ProjectParams = z.object({ projectId: z.string().openapi({ format: "uuid" }) });
export const ChatParams = ProjectParams.extend({ chatId: z.string().openapi({ format: "uuid" }) });
export const ListChatsQuery = z.strictObject({ archived: z.enum(["true", "false"]).optional() });
export const MessagesQuery = z.strictObject({
  cursor: z.string().min(1).max(200).optional(),
  // Decimal digits only: Number() would also take 0x10, 1e1, +5 and 5.0.
  limit: z
    .string()
    .regex(/^[0-9]+$/, "limit must be a decimal integer")
    .transform(Number)
    .pipe(z.number().int().min(1, "limit must be 1 to 100").max(100, "limit must be 1 to 100"))
    .default(50)
    .openapi({ type: "integer", minimum: 1, maximum: 100, default: 50 }),
});
export const SendMessageHeaders = z.object({
  "idempotency-key": z.uuid({ message: "idempotency-key must be a UUID, one per intended message" }),
});
