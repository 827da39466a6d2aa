// A2A push notifications through the webhook pipeline: the config is the chat's, the body the A2A channel's to shape.
import type { PushDeliveryRead } from "../chats/room-calls";
import type { WebhookTask } from "../chats/webhook-task";
import { toBase64 } from "../crypto";
import type { Env } from "../env";
import { type OpenedDelivery, webhookKey } from "./delivery";
import { decryptSecret } from "./secrets";

/** Shapes a push's body from what the chat read: passed in by the entry, since webhooks/ never imports the A2A channel. */
export type PushBody = (read: PushDeliveryRead) => string;

/** What a config's token and credentials are sealed as (secrets.ts): one sealed JSON text. */
export type PushSecrets = { token?: string; credentials?: string };

/**
 * What a push attempt sends, read from the task's chat: the config's URL, the body, `Authorization` when the config has
 * credentials, and when it has a token, `X-A2A-Notification-Token` and the Standard Webhooks signature keyed with its
 * UTF-8 bytes (the secret `whsec_` + base64 of them). Null once the config was deleted; `why` when it can never be made.
 */
export async function openPush(task: WebhookTask, env: Env, shape: PushBody): Promise<(OpenedDelivery & { url: string }) | { why: string } | null> {
  const { taskId, configId } = task.push!;
  const read = await env.CHAT_ROOM.getByName(task.chatId).pushDelivery(taskId, configId, task.eventId);
  if (read === null) return null;
  let secrets: PushSecrets = {};
  if (read.sealed !== null) {
    const key = webhookKey(env);
    const opened = key ? await decryptSecret(read.sealed, key).catch(() => undefined) : undefined;
    if (!opened) return { why: "the config's token and credentials cannot be read (WEBHOOK_KEY changed): create the config again" };
    secrets = JSON.parse(opened) as PushSecrets;
  }
  const headers: Record<string, string> = {};
  if (read.scheme !== null && secrets.credentials !== undefined) headers.authorization = `${read.scheme} ${secrets.credentials}`;
  if (secrets.token !== undefined) headers["x-a2a-notification-token"] = secrets.token;
  const secret = secrets.token === undefined ? null : `whsec_${toBase64(new TextEncoder().encode(secrets.token))}`;
  return { url: read.url, body: shape(read), contentType: "application/a2a+json", headers, secret };
}
