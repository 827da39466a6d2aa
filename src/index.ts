import { createApp } from "./app";
import type { Env } from "./env";
import { consumeWebhookBatch } from "./webhooks/delivery";
import type { WebhookTask } from "./chats/webhook-task";
import { ProjectWebhooks as WebhookPipeline } from "./webhooks/project-webhooks";
import { pushBody } from "./a2a/push-body";

const app = createApp();

export { SignInThrottle } from "./auth/sign-in-throttle";
export { TokenGate } from "./auth/token-gate";
export { ChatRoom } from "./chats/room/chat-room";
export { MaintenanceSwitch } from "./chats/maintenance";
export { ProjectChats } from "./chats/list/project-chats";
export { AccountLedger } from "./credits/account-ledger";

/** The project's webhooks object, with A2A push bodies shaped by the A2A channel (webhooks/ never imports it). */
export class ProjectWebhooks extends WebhookPipeline {
  protected override readonly shapePush = pushBody;
}

export default {
  fetch: app.fetch,
  queue: (batch, env) => consumeWebhookBatch(batch as MessageBatch<WebhookTask>, env),
} satisfies ExportedHandler<Env>;
