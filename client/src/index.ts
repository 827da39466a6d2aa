export {
  AccountClient,
  type AccountCredits,
  type ApiTokenItem,
  type CreatedApiToken,
  type Scope,
  type StatementItem,
  type StatementPageOptions,
} from "./account-client.ts";
export { ApiPromise, type RateLimit, type WithEventId, type WithResponse } from "./answer.ts";
export { ConnectionError, TimeoutError } from "./errors.ts";
export { type ChatEvent, type FollowOptions, sseFrames } from "./events.ts";
export type { components, paths } from "./generated/api.ts";
export type { CallOptions, ClientOptions } from "./http.ts";
export { type Problem, type ProblemCode, ProblemError } from "./problem.ts";
export {
  type AnswerInput,
  type AnswerSubmission,
  type Chain,
  type Chat,
  type CreatedWebhook,
  type Forked,
  type ForkInput,
  type Message,
  type MessagePage,
  ProjectChatClient,
  type ProjectCredits,
  type ProjectSummary,
  type Queue,
  type Question,
  type SendInput,
  type IfBusy,
  type MessageSendOptions,
  type SendOptions,
  type Submission,
  type UsageDay,
  type UsageOptions,
  type WebhookDelivery,
  type WebhookEndpoint,
} from "./project-chat-client.ts";
export { type WebhookEvent, WebhookVerificationError, verifyWebhook } from "./webhooks.ts";
