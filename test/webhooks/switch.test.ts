import { evictDurableObject, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { WebhookOutbox } from "../../src/chats/room/webhook-outbox";
import { SWITCH_LEASE_MS } from "../../src/chats/webhook-switch";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, env, newChat, peek, room, send, world, type World } from "../helpers";
import { standInQueue } from "../doubles/stand-ins";
import type { WebhookTask } from "../../src/chats/webhook-task";
import { hooksPath, outboxOf, register } from "./webhook-helpers";

/** What the chat's object hands to the delivery queue, recorded instead of sent. */
function chatQueue(chatId: string): WebhookTask[] {
  const sent: WebhookTask[] = [];
  standInQueue(env.CHAT_ROOM.idFromName(chatId), { sendBatch: async (messages) => void sent.push(...[...messages].map((m) => m.body)) });
  return sent;
}

/** The switch as the chat's storage holds it: its version and, while off, the lease's end (0: on). */
const storedSwitch = (chatId: string) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ key: string; value: number }>("SELECT key, value FROM meta WHERE key LIKE 'webhook_switch_%'")
        .toArray()
        .map((r) => [r.key, r.value]),
    ),
  );

const hasWebhooksObject = async (projectId: string) => (await listDurableObjectIds(env.PROJECT_WEBHOOKS)).some((id) => id.equals(env.PROJECT_WEBHOOKS.idFromName(projectId)));

/** The chat's reply after a turn's task has started and written its first part (the built-in agent, on a frozen clock). */
async function midTask(w: World, chatId: string, clock: ReturnType<typeof frozenClock>) {
  await send(w, chatId, "hello");
  await runNextAlarm(room(chatId), clock);
  await runNextAlarm(room(chatId), clock);
  const reply = (await peek(w, chatId))[0]!;
  expect(reply).toMatchObject({ role: "owner", status: "working" });
  return reply;
}

describe("the webhook switch", () => {
  it("a project without endpoints records no webhook event and never wakes its webhooks object", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    const queued = chatQueue(c.id);
    for (const text of ["one", "two"]) {
      await send(w, c.id, text);
      await settle(room(c.id), clock);
    }
    expect((await peek(w, c.id)).filter((m) => m.role === "owner" && m.status === "success")).toHaveLength(2);
    expect(await outboxOf(c.id)).toEqual([]);
    expect(queued).toEqual([]);
    expect(await hasWebhooksObject(w.projectId)).toBe(false);
  });

  it("an endpoint created while a task runs receives that task's end: the chat is told before the 201", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    const queued = chatQueue(c.id);
    const reply = await midTask(w, c.id, clock);
    expect(await outboxOf(c.id)).toEqual([]);

    expect((await storedSwitch(c.id)).webhook_switch_off_until).toBeGreaterThan(clock.now());
    const hook = await register(w, "https://receiver.example.com/late", { events: ["message.completed"] });
    expect(hook.status).toBe(201);
    // Told by the project's chat list before the answer, not by a sync of its own.
    expect(await storedSwitch(c.id)).toEqual({ webhook_switch_version: 1, webhook_switch_off_until: 0 });
    await settle(room(c.id), clock);
    const rows = await outboxOf(c.id);
    expect(rows.map((r) => r.type)).toEqual(["message.completed"]);
    await vi.waitFor(() => expect(queued).toEqual([{ projectId: w.projectId, chatId: c.id, eventId: rows[0]!.id, endpointId: hook.json.endpoint.id, type: "message.completed" }]));
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)).toMatchObject({ status: "success" });
  });

  it("a chat that has been evicted keeps what it was told: off until its lease ends, on once told", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await evictDurableObject(room(c.id));
    await midTask(w, c.id, clock);
    await register(w, "https://receiver.example.com/after-eviction", { events: ["submission.failed"] });
    await evictDurableObject(room(c.id));
    await settle(room(c.id), clock);
    expect((await outboxOf(c.id)).map((r) => r.type)).toEqual(["message.completed"]);
  });

  it("the last endpoint removed: a chat stops recording once its next list sync has told it", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    const hook = await register(w, "https://receiver.example.com/brief", { events: ["submission.failed"] });
    await send(w, c.id, "recorded");
    await settle(room(c.id), clock);
    expect((await outboxOf(c.id)).map((r) => r.type)).toEqual(["message.completed"]);

    expect((await call("DELETE", `${hooksPath(w)}/${hook.json.endpoint.id}`, { token: w.token })).status).toBe(204);
    for (const text of ["its sync tells the chat", "not recorded"]) {
      await send(w, c.id, text);
      await settle(room(c.id), clock);
    }
    expect((await outboxOf(c.id)).map((r) => r.type)).toHaveLength(2);
  });

  it("records again once its lease ends without word from the project: the hand-off asks the webhooks object, which has no endpoint", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const queued = chatQueue(c.id);
    // Idle past the lease: a send refused for credits fails at its dispatch, before the turn's list sync renews the lease.
    clock.advance(SWITCH_LEASE_MS + 1);
    await send(w, c.id, "after a long pause");
    await settle(room(c.id), clock);
    await vi.waitFor(async () => expect(await outboxOf(c.id)).toEqual([expect.objectContaining({ type: "submission.failed", handed_off: 1 })]));
    expect(queued).toEqual([]);
    expect(await hasWebhooksObject(w.projectId)).toBe(true);
    // Renewed by that sync: the next refused send records nothing.
    await send(w, c.id, "right after");
    await settle(room(c.id), clock);
    expect(await outboxOf(c.id)).toHaveLength(1);
  });

  it("of two words about the switch the newer wins, whatever order they arrive in", async () => {
    const w = await world();
    const c = await newChat(w);
    await runInDurableObject(room(c.id), async (_: ChatRoom, state) => {
      const outbox = new WebhookOutbox(state.storage.sql);
      const now = Date.now();
      outbox.learn({ on: true, version: 2, until: 0 }, now);
      outbox.learn({ on: false, version: 1, until: now + SWITCH_LEASE_MS }, now);
      expect(outbox.listening(now)).toBe(true);
      outbox.learn({ on: false, version: 3, until: now + SWITCH_LEASE_MS }, now);
      expect(outbox.listening(now)).toBe(false);
      expect(outbox.listening(now + SWITCH_LEASE_MS)).toBe(true);
      // What is stored is what a restarted object reads.
      expect(new WebhookOutbox(state.storage.sql).listening(now)).toBe(false);
    });
  });

  it("a project from before the switch asks its webhooks object once, then answers its chats itself", async () => {
    const clock = frozenClock();
    const w = await world();
    const chats = env.PROJECT_CHATS.getByName(w.projectId);
    await runInDurableObject(chats, (_: unknown, state) => {
      state.storage.sql.exec("DELETE FROM meta WHERE key IN ('webhook_switch_on', 'webhook_switch_version')");
    });
    await evictDurableObject(chats);
    const c = await newChat(w);
    expect(await hasWebhooksObject(w.projectId)).toBe(true);
    await send(w, c.id, "hello");
    await settle(room(c.id), clock);
    expect(await outboxOf(c.id)).toEqual([]);
  });
});
