import type { WebhookEventType } from "../event-registry";
import { iso } from "../../time";
import type { QuestionStorage } from "./question-storage";
import type { ChatRow, RoomStorage } from "./room-storage";
import { entryOf, type SubmissionStorage } from "./submission-storage";
import type { OutboxRow } from "./webhook-outbox";
import { PUSH_EVENT } from "../webhook-task";

type Reader = { store: RoomStorage; submissions: SubmissionStorage; questions: QuestionStorage; chatId: string };

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
  // What a question asks never changes and a closed one never changes again, so the row gives the state at either event.
  "question.asked": (questionId, { questions, chatId }) => {
    const row = questions.byId(questionId);
    return row && { question: questions.viewAsAsked(row, chatId) };
  },
  "question.closed": (questionId, { questions, chatId }) => {
    const row = questions.byId(questionId);
    return row && { question: questions.view(row, chatId) };
  },
};

/** A webhook event's body as receivers get it, `{ type, timestamp, data }`; null when the chat no longer keeps what it refers to. */
export function webhookPayload(event: OutboxRow, chat: ChatRow, read: Omit<Reader, "chatId">): string | null {
  // A push's body is the A2A channel's to shape (ChatRoom.pushDelivery).
  if (event.type === PUSH_EVENT) return null;
  const data = DATA[event.type](event.ref, { ...read, chatId: chat.id });
  return data ? JSON.stringify({ type: event.type, timestamp: iso(event.at), data: { projectId: chat.project_id, chatId: chat.id, ...data } }) : null;
}
