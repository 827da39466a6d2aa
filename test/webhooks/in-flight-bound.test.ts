import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ChatRoom } from "../../src/chats/room/chat-room";
import { ATTEMPTS_IN_FLIGHT_PER_ENDPOINT } from "../../src/webhooks/endpoint-turns";
import { CHAT_RETRY_MS, IN_FLIGHT_MS, OVERDUE_MS, TURN_CHECK_MS } from "../../src/webhooks/project-webhooks";
import { webhookIdOf } from "../../src/webhooks/signature";
import { alarmOf, type Clock, frozenClock, runNextAlarm, settle } from "../clock";
import { newChat, room, send, world, type World } from "../helpers";
import { deliveriesOf, fakeReceiver, hooks, outboxOf, recordQueued, register } from "./webhook-helpers";
import type { WebhookTask } from "../../src/chats/webhook-task";

const HANGING = "https://receiver.example.com/hanging";

/**
 * Receivers that hold every attempt to HANGING until the test releases it by hand; others answer 200 at once.
 * A release runs in the project's object, whose request it answers (an object's promise cannot be settled from another context).
 */
function holdingReceiver(projectId: () => string) {
  const held: { webhookId: string; release: () => Promise<void> }[] = [];
  const received = fakeReceiver((got) =>
    got.url === HANGING
      ? new Promise<Response>((resolve) => {
          const answer = () => resolve(new Response("late"));
          held.push({ webhookId: got.headers["webhook-id"]!, release: () => runInDurableObject(hooks(projectId()), answer) });
        })
      : new Response("ok"),
  );
  return { received, held, at: (url: string) => received.filter((r) => r.url === url).map((r) => r.headers["webhook-id"]) };
}

/** `count` finished replies in one chat of the project and an endpoint that subscribes to none of them: the tasks the test hands over, oldest first. */
async function eventsFor(w: World, url: string, count: number, clock: Clock): Promise<WebhookTask[]> {
  const hook = await register(w, url, { events: ["chat.awaiting_user"] });
  const c = await newChat(w);
  for (let i = 0; i < count; i++) expect((await send(w, c.id, `event ${i}`)).status).toBe(202);
  await settle(room(c.id), clock);
  const events = await outboxOf(c.id);
  expect(events).toHaveLength(count);
  return events.map((e) => ({ projectId: w.projectId, chatId: c.id, eventId: e.id, endpointId: hook.json.endpoint.id, type: "message.completed" }));
}

/** The deliveries waiting their turn in the object's storage, in line order. */
const waiting = (projectId: string) =>
  runInDurableObject(hooks(projectId), (_: unknown, state) =>
    state.storage.sql
      .exec<{ webhook_id: string; attempts: number }>("SELECT webhook_id, attempts FROM deliveries WHERE turn IS NOT NULL ORDER BY turn")
      .toArray()
      .map((r) => ({ ...r })),
  );

const idsOf = (tasks: WebhookTask[]) => Promise.all(tasks.map((t) => webhookIdOf(t.eventId, t.endpointId)));

/** A project whose hanging endpoint was handed `count` deliveries, in order, and holds the first ten. */
async function fullEndpoint(count: number) {
  const clock = frozenClock();
  const w = await world();
  const receiver = holdingReceiver(() => w.projectId);
  const tasks = await eventsFor(w, HANGING, count, clock);
  const ids = await idsOf(tasks);
  for (const task of tasks) await hooks(w.projectId).start(task);
  await vi.waitFor(() => expect(receiver.held).toHaveLength(ATTEMPTS_IN_FLIGHT_PER_ENDPOINT));
  return { clock, w, receiver, tasks, ids };
}

describe(`webhook attempts in flight, at most ${ATTEMPTS_IN_FLIGHT_PER_ENDPOINT} per endpoint`, () => {
  it("the eleventh attempt to a hanging endpoint waits its turn, uncounted, and goes once one finishes, in order", async () => {
    const { clock, w, receiver, tasks, ids } = await fullEndpoint(ATTEMPTS_IN_FLIGHT_PER_ENDPOINT + 2);
    const stub = hooks(w.projectId);
    expect(receiver.at(HANGING)).toEqual(ids.slice(0, 10));
    // The two past the bound wait in line, in the order they came, no attempt counted; the alarm looks at the line meanwhile.
    expect(await waiting(w.projectId)).toEqual([
      { webhook_id: ids[10], attempts: 0 },
      { webhook_id: ids[11], attempts: 0 },
    ]);
    const listed = await deliveriesOf(w, tasks[0]!.endpointId);
    expect(listed.filter((d: { attempts: number }) => d.attempts === 0)).toEqual([
      expect.objectContaining({ webhookId: ids[11], status: "pending", lastError: null }),
      expect.objectContaining({ webhookId: ids[10], status: "pending", lastError: null }),
    ]);
    expect(await alarmOf(stub)).toBe(clock.now() + TURN_CHECK_MS);
    // One finishes (the fifth): the first in line goes, with the webhook-id it was waiting with; then the next.
    await receiver.held[4]!.release();
    await vi.waitFor(() => expect(receiver.held).toHaveLength(11));
    expect(receiver.held[10]!.webhookId).toBe(ids[10]);
    expect(await waiting(w.projectId)).toEqual([{ webhook_id: ids[11], attempts: 0 }]);
    await receiver.held[0]!.release();
    await vi.waitFor(() => expect(receiver.held).toHaveLength(12));
    expect(receiver.held[11]!.webhookId).toBe(ids[11]);
    expect(await waiting(w.projectId)).toEqual([]);
    await receiver.held[10]!.release();
    await vi.waitFor(async () =>
      expect((await deliveriesOf(w, tasks[0]!.endpointId)).find((d: { webhookId: string }) => d.webhookId === ids[10])).toMatchObject({ status: "delivered", attempts: 1 }),
    );
    expect(receiver.at(HANGING)).toHaveLength(12);
  });

  it("another endpoint of the same project is not held up by a full one", async () => {
    const { clock, w, receiver } = await fullEndpoint(ATTEMPTS_IN_FLIGHT_PER_ENDPOINT + 1);
    const [other] = await eventsFor(w, "https://receiver.example.com/beside", 1, clock);
    const stub = hooks(w.projectId);
    expect(await waiting(w.projectId)).toHaveLength(1);
    // Its attempt starts at once and is awaited here to its end, while the hanging endpoint's ten hold and its eleventh waits.
    expect(await stub.attempt(other!, clock.now())).toBeUndefined();
    expect(receiver.at("https://receiver.example.com/beside")).toEqual([await webhookIdOf(other!.eventId, other!.endpointId)]);
    expect((await deliveriesOf(w, other!.endpointId))[0]).toMatchObject({ status: "delivered", attempts: 1 });
    expect(await waiting(w.projectId)).toHaveLength(1);
  });

  it("a restart while attempts wait loses none: the alarm starts those in line, and the cut-off ones are handed over again", async () => {
    const { clock, w, receiver, tasks, ids } = await fullEndpoint(ATTEMPTS_IN_FLIGHT_PER_ENDPOINT + 2);
    const startedAt = clock.now();
    // The object restarts (a crash, a deploy): its ten requests end with it (workerd logs each as an uncaught exception), and nothing else calls it.
    await expect(runInDurableObject(hooks(w.projectId), (_: unknown, state) => state.abort("restart"))).rejects.toThrow("restart");
    const stub = hooks(w.projectId);
    const queued = recordQueued(w.projectId);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(clock.now()).toBe(startedAt + TURN_CHECK_MS + 1);
    await vi.waitFor(() => expect(receiver.held).toHaveLength(12));
    expect(receiver.held.slice(10).map((h) => h.webhookId)).toEqual(ids.slice(10));
    expect(await waiting(w.projectId)).toEqual([]);
    // The ten cut off by the restart are handed to the queue again once their claims are overdue, each with its webhook-id.
    while (queued.length === 0 && (await runNextAlarm(stub, clock))) {}
    expect(clock.now()).toBe(startedAt + IN_FLIGHT_MS + OVERDUE_MS + 1);
    expect(queued.map((q) => q.body)).toEqual(tasks.slice(0, 10));
  });

  it("a turn the chat's object cannot serve is no attempt: the delivery keeps its place and goes 30 s later", async () => {
    const clock = frozenClock();
    const w = await world();
    const received = fakeReceiver();
    const [task] = await eventsFor(w, "https://receiver.example.com/chat-down", 1, clock);
    const [id] = await idsOf([task!]);
    vi.spyOn(ChatRoom.prototype, "webhookPayload").mockRejectedValueOnce(new Error("Network connection lost."));
    const stub = hooks(w.projectId);
    const startedAt = clock.now();
    expect(await stub.attempt(task!, startedAt)).toBeUndefined();
    expect(received).toEqual([]);
    expect(await waiting(w.projectId)).toEqual([{ webhook_id: id, attempts: 0 }]);
    expect((await deliveriesOf(w, task!.endpointId))[0]).toMatchObject({ status: "pending", attempts: 0, nextAttemptAt: new Date(startedAt + CHAT_RETRY_MS).toISOString() });
    while ((await waiting(w.projectId)).length > 0 && (await runNextAlarm(stub, clock))) {}
    expect(clock.now()).toBe(startedAt + CHAT_RETRY_MS + 1);
    await vi.waitFor(async () => expect((await deliveriesOf(w, task!.endpointId))[0]).toMatchObject({ webhookId: id, status: "delivered", attempts: 1 }));
    expect(received.map((r) => r.headers["webhook-id"])).toEqual([id]);
  });

  it("a delivery whose chat's object cannot be asked for a day fails, with no attempt counted", async () => {
    const clock = frozenClock();
    const w = await world();
    const received = fakeReceiver();
    const [task] = await eventsFor(w, "https://receiver.example.com/chat-gone", 1, clock);
    vi.spyOn(ChatRoom.prototype, "webhookPayload").mockRejectedValue(new Error("Network connection lost."));
    const stub = hooks(w.projectId);
    expect(await stub.attempt(task!, clock.now())).toBeUndefined();
    clock.advance(86_400_000);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    await vi.waitFor(async () =>
      expect((await deliveriesOf(w, task!.endpointId))[0]).toMatchObject({ status: "failed", attempts: 0, lastError: "the chat's object could not be asked for a day" }),
    );
    expect(await waiting(w.projectId)).toEqual([]);
    expect(received).toEqual([]);
  });
});
