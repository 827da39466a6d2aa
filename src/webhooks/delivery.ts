import type { Env } from "../env";
import { decryptSecret } from "./secrets";
import { signWebhook, webhookIdOf } from "./signature";
import type { WebhookEventType } from "./schemas";
import { log } from "../log";

/** A queue message: which event of which chat goes to which endpoint. The payload stays in the chat (a reply can pass 128 KB). */
export type WebhookTask = { projectId: string; chatId: string; eventId: string; endpointId: string; type: WebhookEventType };

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

/**
 * One attempt at one delivery; the delay before the next attempt, or undefined when the delivery has
 * ended (or this copy of the message has nothing to do). The payload is read and the secret opened
 * first; the attempt is claimed and counted last, right before the request, so a delete that has
 * returned stops it and a failure on the way costs no attempt.
 */
export async function deliver(task: WebhookTask, env: Env, now = Date.now()): Promise<number | undefined> {
  const webhookId = await webhookIdOf(task.eventId, task.endpointId);
  const project = env.PROJECT_WEBHOOKS.getByName(task.projectId);
  const target = await project.target(task.endpointId);
  if (!target) return undefined;
  const key = webhookKey(env);
  const body = key ? await env.CHAT_ROOM.getByName(task.chatId).webhookPayload(task.eventId) : null;
  const secret = key && (await decryptSecret(target.sealedSecret, key).catch(() => undefined));
  if (!key || body === null || !secret) {
    const why = !key
      ? "WEBHOOK_KEY is not set"
      : body === null
        ? "the event is no longer kept"
        : "the endpoint's secret cannot be read (WEBHOOK_KEY changed): re-create the endpoint";
    await project.giveUp(task.endpointId, webhookId, task.type, why);
    return undefined;
  }
  const plan = await project.beginAttempt(task.endpointId, webhookId, task.type, now);
  if (plan.kind === "skip") return undefined;
  const timestamp = Math.floor(now / 1000);
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const response = await fetch(plan.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "project-chat-webhooks/1",
        "webhook-id": webhookId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": await signWebhook(secret, webhookId, timestamp, body),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    statusCode = response.status;
    await response.body?.cancel();
    if (statusCode < 200 || statusCode > 299) error = `the receiver answered HTTP ${statusCode}`;
  } catch (cause) {
    error = (cause as Error)?.name === "TimeoutError" ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : "the receiver could not be reached";
  }
  const delay = error ? RETRY_DELAYS_S[plan.attempt - 1] : undefined;
  await project.recordAttempt(task.endpointId, webhookId, { ok: !error, statusCode, error, nextAttemptAt: delay === undefined ? null : now + delay * 1000 });
  return delay;
}

/** The queue consumer: each message is one attempt; a failed one comes back after its delay. */
export async function consumeWebhookBatch(batch: MessageBatch<WebhookTask>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const delay = await deliver(message.body, env);
        if (delay === undefined) message.ack();
        else message.retry({ delaySeconds: delay });
      } catch (error) {
        // The project or chat object could not be asked: the attempt did not happen, try again shortly.
        log.warn("webhook_attempt_failed", { error: (error as Error)?.name });
        message.retry({ delaySeconds: RETRY_DELAYS_S[0] });
      }
    }),
  );
}
