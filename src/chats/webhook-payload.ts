import type { WebhookEventType } from "../event-registry";
import { iso } from "../time";
import type { ChatRow, RoomStorage } from "./room-storage";
import { entryOf, type SubmissionStorage } from "./submission-storage";
import type { OutboxRow } from "./webhook-outbox";

type Reader = { store: RoomStorage; submissions: SubmissionStorage };

/** Each webhook event's data past the chat's ids, read from what its outbox row refers to; undefined when the chat no longer keeps it. */
const DATA: { [T in WebhookEventType]: (ref: string, read: Reader) => object | undefined } = {
  "message.completed": (messageId, { store }) => {
    const message = store.message(messageId);
    return message && { message };
  },
  "submission.failed": (submissionId, { submissions }) => {
    const submission = submissions.byId(submissionId);
    return submission && { entry: entryOf(submission, "failed") };
  },
  // The chat as it was when the event happened, kept whole in the row.
  "chat.awaiting_user": (chat) => ({ chat: JSON.parse(chat) }),
};

/** A webhook event's body as receivers get it, `{ type, timestamp, data }`; null when the chat no longer keeps what it refers to. */
export function webhookPayload(event: OutboxRow, chat: ChatRow, store: RoomStorage, submissions: SubmissionStorage): string | null {
  const data = DATA[event.type](event.ref, { store, submissions });
  return data ? JSON.stringify({ type: event.type, timestamp: iso(event.at), data: { projectId: chat.project_id, chatId: chat.id, ...data } }) : null;
}
