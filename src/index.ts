import { createApp } from "./app";
import type { Env } from "./env";
import { consumeWebhookBatch } from "./webhooks/delivery";
import type { WebhookTask } from "./chats/webhook-task";

const app = createApp();

export { SignInThrottle } from "./auth/sign-in-throttle";
export { TokenGate } from "./auth/token-gate";
export { ChatRoom } from "./chats/room/chat-room";
export { MaintenanceSwitch } from "./chats/maintenance";
export { ProjectChats } from "./chats/list/project-chats";
export { AccountLedger } from "./credits/account-ledger";
export { ProjectWebhooks } from "./webhooks/project-webhooks";

export default {
  fetch: app.fetch,
  queue: (batch, env) => consumeWebhookBatch(batch as MessageBatch<WebhookTask>, env),
} satisfies ExportedHandler<Env>;
