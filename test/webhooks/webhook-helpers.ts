import { runInDurableObject } from "cloudflare:test";
import { vi } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import type { Env } from "../../src/env";
import type { ProjectWebhooks } from "../../src/webhooks/project-webhooks";
import { type Clock, settle } from "../clock";
import { call, env, newChat, room, send, world, type World } from "../helpers";
import type { WebhookTask } from "../../src/chats/webhook-task";

export const hooksPath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/webhooks`;
export const register = (w: World, url: string, extra: Record<string, unknown> = {}, token = w.token) => call("POST", hooksPath(w), { token, body: { url, ...extra } });

export type Received = { url: string; headers: Record<string, string>; body: string; redirect: string; timed: boolean };
const realFetch = globalThis.fetch;

/** Receivers at https://receiver.example.com/: answer() decides each attempt's response (200 by default); other fetches pass through. */
export function fakeReceiver(answer: (got: Received, index: number) => Response | Promise<Response> = () => new Response("ok")) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://receiver.example.com/")) return realFetch(input as RequestInfo, init);
    const got = {
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
      redirect: request.redirect,
      timed: init?.signal instanceof AbortSignal,
    };
    const index = received.push(got) - 1;
    return answer(got, index);
  });
  return received;
}

/** The chat's outbox rows, oldest first. */
export const outboxOf = (chatId: string) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) =>
    state.storage.sql.exec<{ id: string; type: string; handed_off: number }>("SELECT id, type, handed_off_at IS NOT NULL AS handed_off FROM webhook_outbox ORDER BY seq").toArray(),
  );

/** A chat with one finished reply and an endpoint that subscribes to nothing it sends, so only the test's attempts reach it. */
export async function eventFor(url: string, clock: Clock, w?: World) {
  w ??= await world();
  const hook = await register(w, url, { events: ["chat.awaiting_user"] });
  const c = await newChat(w);
  await send(w, c.id, "hello");
  await settle(room(c.id), clock);
  const [event] = await outboxOf(c.id);
  const task: WebhookTask = { projectId: w.projectId, chatId: c.id, eventId: event!.id, endpointId: hook.json.endpoint.id, type: "message.completed" };
  return { w, task };
}

/** Changes the project's webhooks object's bindings (a queue that records, another WEBHOOK_KEY) while it lives. */
export const patchHooksEnv = (projectId: string, patch: Partial<Env>) =>
  runInDurableObject(env.PROJECT_WEBHOOKS.getByName(projectId), (hooks: ProjectWebhooks) => {
    const self = hooks as unknown as { env: Env };
    self.env = { ...self.env, ...patch };
  });

export type Queued = { body: WebhookTask; delaySeconds: number | undefined };

/** Makes the project's object send to a list instead of the queue: what it queues is recorded and never delivered. */
export async function recordQueued(projectId: string): Promise<Queued[]> {
  const queued: Queued[] = [];
  const queue = {
    send: async (body: WebhookTask, options?: QueueSendOptions) => void queued.push({ body, delaySeconds: options?.delaySeconds }),
    sendBatch: async (messages: MessageSendRequest<WebhookTask>[]) => void queued.push(...messages.map((m) => ({ body: m.body, delaySeconds: m.delaySeconds }))),
  };
  await patchHooksEnv(projectId, { WEBHOOK_DELIVERIES: queue as unknown as Queue });
  return queued;
}
