import type { WebhookEventType } from "./event-registry";

/** The outbox's type for an A2A push: a task's state moved (push-configs.ts). Not a webhook event: no endpoint receives it. */
export const PUSH_EVENT = "a2a.task";
export type OutboxEventType = WebhookEventType | typeof PUSH_EVENT;

/**
 * A queue message the chat object sends: which event of which chat goes to which endpoint, or for a push, to which of a
 * task's configs (its endpointId then names the config, so each has its own line). The payload stays in the chat (a reply can pass 128 KB).
 */
export type WebhookTask = {
  projectId: string;
  chatId: string;
  eventId: string;
  endpointId: string;
  type: OutboxEventType;
  push?: { taskId: string; configId: string };
};
