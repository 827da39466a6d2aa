import type { Env } from "../env";
import { decryptSecret } from "./secrets";
import { signWebhook } from "./signature";
import { log } from "../log";
import type { WebhookTask } from "../chats/webhook-task";

// After the nth failed attempt the next one waits RETRY_DELAYS_S[n - 1]; after the last, the delivery has failed. All within a day.
export const RETRY_DELAYS_S = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600];

/** The schedule as the documentation states it: "5 s, 5 min, …, 5 h and 10 h". */
export function retrySchedule(): string {
  const spoken = RETRY_DELAYS_S.map((s) => (s >= 3600 ? `${s / 3600} h` : s >= 60 ? `${s / 60} min` : `${s} s`));
  return `${spoken.slice(0, -1).join(", ")} and ${spoken.at(-1)}`;
}
const ATTEMPT_TIMEOUT_MS = 15_000;
// Local development only (WEBHOOK_ALLOW_LOOPBACK): secrets sealed with a key anyone can read.
const DEVELOPMENT_KEY = "project-chat-local-development-webhook-key";

/** The key that seals endpoint secrets: WEBHOOK_KEY, or in local development a fixed one; undefined when webhooks cannot be used. */
export function webhookKey(env: Env): string | undefined {
  if (env.WEBHOOK_KEY) return env.WEBHOOK_KEY;
  return env.WEBHOOK_ALLOW_LOOPBACK === "true" ? DEVELOPMENT_KEY : undefined;
}

/** What an attempt sends: its body and content type, headers of its own, and the Standard Webhooks secret it is signed with (null: unsigned). */
export type OpenedDelivery = { body: string; contentType: string; headers: Record<string, string>; secret: string | null };

/** What an endpoint's attempt sends: the event's body, signed with the endpoint's opened secret; or why the delivery can never be made. */
export async function openDelivery(task: WebhookTask, env: Env, sealedSecret: string): Promise<OpenedDelivery | { why: string }> {
  const key = webhookKey(env);
  if (!key) return { why: "WEBHOOK_KEY is not set" };
  const body = await env.CHAT_ROOM.getByName(task.chatId).webhookPayload(task.eventId);
  if (body === null) return { why: "the event is no longer kept" };
  const secret = await decryptSecret(sealedSecret, key).catch(() => undefined);
  if (!secret) return { why: "the endpoint's secret cannot be read (WEBHOOK_KEY changed). Re-create the endpoint." };
  return { body, contentType: "application/json", headers: {}, secret };
}

/** One POST to a receiver, signed when it has a secret: its status code, and why it did not deliver (null when it did). */
export async function postToReceiver(url: string, webhookId: string, opened: OpenedDelivery, now: number) {
  const timestamp = Math.floor(now / 1000);
  const { body, secret } = opened;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        ...opened.headers,
        "content-type": opened.contentType,
        "user-agent": "project-chat-webhooks/1",
        "webhook-id": webhookId,
        "webhook-timestamp": String(timestamp),
        ...(secret === null ? {} : { "webhook-signature": await signWebhook(secret, webhookId, timestamp, body) }),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    await response.body?.cancel();
    const ok = response.status >= 200 && response.status <= 299;
    return { statusCode: response.status, error: ok ? null : `the receiver answered HTTP ${response.status}` };
  } catch (cause) {
    const error = (cause as Error)?.name === "TimeoutError" ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : "the receiver could not be reached";
    return { statusCode: null, error };
  }
}

/** The wait before the queue offers a message again whose project could not be asked: 5 s, 10 s, 20 s, … at most an hour. */
const handOverRetryDelay = (attempts: number) => Math.min(RETRY_DELAYS_S[0]! * 2 ** Math.max(0, attempts - 1), 3600);

/**
 * The queue consumer. Each message is handed to its project's ProjectWebhooks object, which claims
 * the attempt and makes it there, and whose alarm hands a retry back at its time: the batch is done in milliseconds
 * whatever the receivers do, so a receiver that hangs holds no other project's (or endpoint's) message.
 */
export async function consumeWebhookBatch(batch: MessageBatch<WebhookTask>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        await env.PROJECT_WEBHOOKS.getByName(message.body.projectId).start(message.body);
        message.ack();
      } catch (error) {
        // The project or chat object could not be asked: the attempt did not start. Each try waits twice as long, so the
        // queue's retries outlast an outage of more than an hour before the message is given up.
        log.warn("webhook_attempt_failed", { error: (error as Error)?.name });
        message.retry({ delaySeconds: handOverRetryDelay(message.attempts) });
      }
    }),
  );
}
