import { z } from "@hono/zod-openapi";
import { Question } from "./question-schemas";
import { Chat, Message, Queue, QueueEntry, QueueEntryChange } from "./schemas";

/**
 * Every event this service sends, in one place: what a chat's stream sends, and what webhooks
 * deliver. The event log's types, the OpenAPI document (and so the client's generated types) and
 * the routes' descriptions are built from these two lists, so no list of names is written twice.
 */

const MessageDelta = z.object({ id: z.uuid(), text: z.string() }).openapi("MessageDelta", { description: "Text appended to a working agent reply" });
const QueueRemoved = z.object({ id: z.uuid() }).openapi("QueueRemoved", { description: "The id of the entry that left the queue" });
const Snapshot = z.object({ chat: Chat, queue: Queue }).openapi("ChatSnapshot");

/** A chat stream's events, in the order the documentation names them: what `data` holds (its component), and when each is sent. */
const STREAM_EVENTS = {
  snapshot: { data: Snapshot, component: "ChatSnapshot", about: "First event of a stream that does not resume; its id is the chat's newest event id (0 when none)" },
  chat: { data: Chat, component: "Chat", about: "The chat after any change to it" },
  "queue.entry": {
    data: QueueEntryChange,
    component: "QueueEntryChange",
    about: "A queue entry, as GET queue shows it, when it joins the queue and whenever its status changes, with `before`: the entry it now precedes in the run order (null: last)",
  },
  "queue.removed": {
    data: QueueRemoved,
    component: "QueueRemoved",
    about: "An entry left the queue: its task started, it was cancelled or taken as steering, or a failed entry's time in the queue ended",
  },
  message: {
    data: Message,
    component: "Message",
    about: "A message when it is created and whenever its status changes; a reply's last one has its final status and whole content",
  },
  "message.delta": { data: MessageDelta, component: "MessageDelta", about: "Text appended to a working reply (no message event per delta)" },
  question: {
    data: Question,
    component: "Question",
    about: "The whole Question when the agent asks it and whenever its status changes (answered, declined, superseded, expired); the chat event of the same change follows",
  },
} as const;
type StreamEventType = keyof typeof STREAM_EVENTS;
/** What the event log stores: every stream event but the snapshot, which is made when a stream opens. */
export type ChatEventType = Exclude<StreamEventType, "snapshot">;
export const LOGGED_EVENT_TYPES = Object.keys(STREAM_EVENTS).filter((type): type is ChatEventType => type !== "snapshot");

/** The components a frame's `data` carries that nothing else names: the events router registers them so contentSchema resolves. */
export const EVENT_DATA_COMPONENTS = { ChatSnapshot: Snapshot, QueueRemoved, MessageDelta, QueueEntryChange };

// On the wire `data` is one line of JSON text; contentSchema names what it parses to (JSON Schema 2020-12, OpenAPI 3.1).
const frame = (event: StreamEventType) =>
  z
    .object({
      id: z.string().regex(/^[0-9]+$/),
      event: z.literal(event),
      data: z.string().openapi({
        description: `JSON text of a ${STREAM_EVENTS[event].component}`,
        contentMediaType: "application/json",
        contentSchema: { $ref: `#/components/schemas/${STREAM_EVENTS[event].component}` },
      } as Record<string, unknown>),
    })
    .openapi({ description: STREAM_EVENTS[event].about });
const [first, ...rest] = (Object.keys(STREAM_EVENTS) as StreamEventType[]).map(frame);

/** One Server-Sent Event of a chat's stream: `data` is JSON text, of the component its contentSchema names. */
export const ChatEvent = z.discriminatedUnion("event", [first!, ...rest]).openapi("ChatEvent");

/**
 * Webhook events: the payload's component name, what `data` holds besides the project's and chat's
 * ids, and when it is sent. A new event is an entry here, its payload in chats/webhook-payload.ts
 * (the compiler asks for it) and the outbox.record call where it happens.
 */
export const WEBHOOK_EVENTS = {
  "message.completed": {
    name: "MessageCompletedWebhook",
    data: { message: Message },
    about: "An agent reply reached success, failed or interrupted_by_user: the final Message, content whole",
  },
  "chat.awaiting_user": { name: "ChatAwaitingUserWebhook", data: { chat: Chat }, about: "The chat's isAwaitingUser became true: the Chat at that moment" },
  "submission.failed": { name: "SubmissionFailedWebhook", data: { entry: QueueEntry }, about: "A queue entry became failed: the entry" },
  "question.asked": { name: "QuestionAskedWebhook", data: { question: Question }, about: "The agent asked a question: the Question as it was asked (pending)" },
  "question.closed": {
    name: "QuestionClosedWebhook",
    data: { question: Question },
    about: "A question stopped being pending (answered, declined, superseded or expired): the Question as it was closed",
  },
} as const;
export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventType, ...WebhookEventType[]];

/** What a receiver gets for an event type: `{ type, timestamp, data }`, data carrying the state at the event. */
export const webhookPayloadSchema = (type: WebhookEventType) => {
  const { name, data } = WEBHOOK_EVENTS[type];
  return z.object({ type: z.literal(type), timestamp: z.iso.datetime(), data: z.object({ projectId: z.uuid(), chatId: z.uuid(), ...data }) }).openapi(name);
};

/** The names in prose, as the documentation lists them: "`a`, `b` and `c`". */
export const spokenList = (names: readonly string[]): string => {
  const quoted = names.map((n) => `\`${n}\``);
  return `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
};
