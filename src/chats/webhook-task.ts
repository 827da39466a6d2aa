import type { WebhookEventType } from "./event-registry";

/** A queue message the chat object sends: which event of which chat goes to which endpoint. The payload stays in the chat (a reply can pass 128 KB). */
export type WebhookTask = { projectId: string; chatId: string; eventId: string; endpointId: string; type: WebhookEventType };
