import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { vi } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import type { TestProjectWebhooks } from "../doubles/test-project-webhooks";
import { standInQueue } from "../doubles/stand-ins";
import { type Clock, settle } from "../clock";
import { call, env, newChat, room, send, world, type World } from "../helpers";
import { unplannedHost } from "../network";
import type { WebhookTask } from "../../src/chats/webhook-task";

export const hooksPath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/webhooks`;
export const register = (w: World, url: string, extra: Record<string, unknown> = {}, token = w.token) => call("POST", hooksPath(w), { token, body: { url, ...extra } });

export type Received = { url: string; headers: Record<string, string>; body: string; redirect: string; timed: boolean };
/** Receivers at https://receiver.example.com/: answer() decides each attempt's response (200 by default); any other host fails the test. */
export function fakeReceiver(answer: (got: Received, index: number) => Response | Promise<Response> = () => new Response("ok")) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://receiver.example.com/")) return unplannedHost(request);
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

/**
 * An endpoint subscribed only to an event type the test never causes: its project's chats then record
 * every webhook event in their outboxes (a project without endpoints records none), and nothing is sent.
 */
export const recordingEvents = (w: World, unused: string) => register(w, "https://receiver.example.com/never-called", { events: [unused] });

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

// The test Worker binds PROJECT_WEBHOOKS to TestProjectWebhooks (vitest.config.ts, test/worker.ts).
const projectHooks = env.PROJECT_WEBHOOKS as unknown as DurableObjectNamespace<TestProjectWebhooks>;

/** The project's webhooks object. */
export const hooks = (projectId: string) => projectHooks.getByName(projectId);

/** An endpoint's deliveries as its owner lists them (GET …/webhooks/{id}/deliveries), newest first. */
export const deliveriesOf = async (w: World, endpointId: string) => (await call("GET", `${hooksPath(w)}/${endpointId}/deliveries`, { token: w.token })).json.items;

export type Queued = { body: WebhookTask; delaySeconds: number | undefined };

/** Makes the project's object send to a list instead of the queue: what it queues is recorded and never delivered. */
export function recordQueued(projectId: string): Queued[] {
  const queued: Queued[] = [];
  standInQueue(env.PROJECT_WEBHOOKS.idFromName(projectId), {
    sendBatch: async (messages) => void queued.push(...[...messages].map((m) => ({ body: m.body, delaySeconds: m.delaySeconds }))),
  });
  return queued;
}

/**
 * The Worker's own queue handler given a batch of these tasks, as the runtime builds one: the acks and
 * retries the runtime records, and each message's retry call (the local queue result does not keep a retry's delay).
 */
export async function consumeBatch(tasks: WebhookTask[], attempts = 1) {
  const batch = createMessageBatch<WebhookTask>(
    "project-chat-webhooks",
    tasks.map((body, i) => ({ id: `m${i}`, timestamp: Date.now(), attempts, body })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, "retry"));
  const ctx = createExecutionContext();
  await (worker as ExportedHandler<Env>).queue!(batch, env, ctx);
  return { ...(await getQueueResult(batch, ctx)), retries };
}
