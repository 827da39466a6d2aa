import { evictDurableObject } from "cloudflare:test";
import { describe, expect, vi } from "vitest";
import { RETRY_DELAYS_S } from "../../src/webhooks/delivery";
import { FAILURES_TO_DISABLE } from "../../src/webhooks/endpoints";
import { ProjectWebhooks } from "../../src/webhooks/project-webhooks";
import { signWebhook } from "../../src/webhooks/signature";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, env, historyOf, newChat, peek, room, send, world } from "../helpers";
import { endQueueStandIn, standInQueue, standInWebhookKey } from "../doubles/stand-ins";
import { consumeBatch, deliveriesOf, eventFor, fakeReceiver, hooks, hooksPath, outboxOf, register } from "./webhook-helpers";
import { it } from "../fixtures/chat";
import type { WebhookTask } from "../../src/chats/webhook-task";

/** One attempt by the task's project object, awaited: the delay before the next one, or undefined. */
const deliver = (task: WebhookTask, now: number) => hooks(task.projectId).attempt(task, now);
describe("webhook delivery", () => {
  it("delivers a finished reply as message.completed through the queue, signed with the endpoint's secret", async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world();
    const hook = await register(w, "https://receiver.example.com/done");
    const c = await newChat(w);
    await send(w, c.id, "tell me when done");
    await settle(room(c.id), clock);
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 5_000 });
    const got = received[0]!;
    const body = JSON.parse(got.body);
    expect(body).toMatchObject({ type: "message.completed", data: { projectId: w.projectId, chatId: c.id } });
    const reply = (await historyOf(w, c.id)).items.find((m) => m.role === "owner")!;
    expect(body.data.message).toEqual(reply);
    expect(got.headers["content-type"]).toBe("application/json");
    // No redirect is followed, and the attempt has its deadline.
    expect(got.redirect).toBe("manual");
    expect(got.timed).toBe(true);
    const expected = await signWebhook(hook.json.secret, got.headers["webhook-id"]!, Number(got.headers["webhook-timestamp"]), got.body);
    expect(got.headers["webhook-signature"]).toBe(expected);
    await vi.waitFor(async () => expect((await deliveriesOf(w, hook.json.endpoint.id))[0]).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 200 }));
  });

  it("delivers question.asked and question.closed, each with the Question as it stood at its event", async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world();
    await register(w, "https://receiver.example.com/questions", { events: ["question.asked", "question.closed"] });
    const c = await newChat(w);
    await send(w, c.id, "/approve merge the branch");
    await settle(room(c.id), clock);
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 5_000 });
    const asked = JSON.parse(received[0]!.body);
    expect(asked).toMatchObject({ type: "question.asked", data: { projectId: w.projectId, chatId: c.id, question: { kind: "approval", status: "pending", answer: null } } });
    const questionId = asked.data.question.id;
    const answered = await call("POST", `/v1/projects/${w.projectId}/chats/${c.id}/questions/${questionId}/answer`, {
      token: w.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { decision: "approve" },
    });
    expect(answered.status).toBe(202);
    await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 5_000 });
    const closed = JSON.parse(received[1]!.body);
    const now = (await call("GET", `/v1/projects/${w.projectId}/chats/${c.id}/questions/${questionId}`, { token: w.token })).json;
    expect(closed).toMatchObject({ type: "question.closed", data: { question: now } });
    expect(now).toMatchObject({ status: "answered", answer: { decision: "approve" }, submissionId: answered.json.submissionId });
    expect(received[0]!.headers["webhook-id"]).not.toBe(received[1]!.headers["webhook-id"]);
  });

  it("tries a failing receiver again on the schedule, with the same webhook-id, then records the delivery failed", async () => {
    const received = fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const w = await world();
    // Subscribed to nothing the chat will send, so only this test's attempts reach it.
    const hook = await register(w, "https://receiver.example.com/flaky", { events: ["chat.awaiting_user"] });
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await settle(room(c.id), clock);
    const [event] = await outboxOf(c.id);
    const task: WebhookTask = { projectId: w.projectId, chatId: c.id, eventId: event!.id, endpointId: hook.json.endpoint.id, type: "message.completed" };
    const delays: (number | undefined)[] = [];
    for (let attempt = 0; attempt <= RETRY_DELAYS_S.length; attempt++) {
      const delay = await deliver(task, clock.now());
      delays.push(delay);
      const [delivery] = await deliveriesOf(w, hook.json.endpoint.id);
      expect(delivery.attempts).toBe(attempt + 1);
      expect(delivery.lastStatusCode).toBe(500);
      expect(delivery.nextAttemptAt).toBe(delay === undefined ? null : new Date(clock.now() + delay * 1000).toISOString());
      if (delay !== undefined) clock.advance(delay * 1000);
    }
    expect(delays).toEqual([5, 300, 1_800, 7_200, 18_000, 36_000, undefined]);
    expect(RETRY_DELAYS_S.reduce((a, b) => a + b, 0)).toBeLessThan(86_400);
    expect((await deliveriesOf(w, hook.json.endpoint.id))[0]).toMatchObject({ status: "failed", attempts: 7 });
    expect(new Set(received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    // Ended: another copy of the message (a retried hand-off) makes no attempt.
    expect(await deliver(task, clock.now())).toBeUndefined();
    expect(received).toHaveLength(7);
  });

  it("follows no redirect: a 3xx is a failed attempt", async () => {
    fakeReceiver(() => new Response(null, { status: 302, headers: { location: "https://receiver.example.com/elsewhere" } }));
    const clock = frozenClock();
    const w = await world();
    const hook = await register(w, "https://receiver.example.com/moved", { events: ["chat.awaiting_user"] });
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await settle(room(c.id), clock);
    const [event] = await outboxOf(c.id);
    const task: WebhookTask = { projectId: w.projectId, chatId: c.id, eventId: event!.id, endpointId: hook.json.endpoint.id, type: "message.completed" };
    expect(await deliver(task, clock.now())).toBe(5);
    expect((await deliveriesOf(w, hook.json.endpoint.id))[0]).toMatchObject({ status: "pending", lastStatusCode: 302, lastError: "the receiver answered HTTP 302" });
  });

  it(`disables an endpoint after ${FAILURES_TO_DISABLE} failed deliveries in a row; a delivered one resets the count`, async ({ w }) => {
    const hook = await register(w, "https://receiver.example.com/down");
    const endpointId = hook.json.endpoint.id;
    const project = hooks(w.projectId);
    const failDelivery = async (i: number) => {
      await project.beginAttempt(endpointId, `msg_${i}`, "message.completed");
      await project.recordAttempt(endpointId, `msg_${i}`, { ok: false, statusCode: 500, error: "HTTP 500", nextAttemptAt: null });
    };
    for (let i = 0; i < FAILURES_TO_DISABLE - 1; i++) await failDelivery(i);
    await project.beginAttempt(endpointId, "msg_ok", "message.completed");
    await project.recordAttempt(endpointId, "msg_ok", { ok: true, statusCode: 200, error: null, nextAttemptAt: null });
    for (let i = 100; i < 100 + FAILURES_TO_DISABLE - 1; i++) await failDelivery(i);
    expect((await call("GET", hooksPath(w), { token: w.token })).json.items[0].disabledAt).toBeNull();
    await failDelivery(999);
    expect((await call("GET", hooksPath(w), { token: w.token })).json.items[0].disabledAt).toEqual(expect.any(String));
    expect(await project.subscriptions()).toEqual([]);
    expect(await project.beginAttempt(endpointId, "msg_after", "message.completed")).toEqual({ kind: "skip" });
    expect(await deliveriesOf(w, endpointId)).toHaveLength(100);
  });

  it("keeps an event in the chat's outbox until the queue has it, also across a restart", async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world();
    await register(w, "https://receiver.example.com/later");
    const c = await newChat(w);
    // The queue refuses the chat's hand-off.
    standInQueue(env.CHAT_ROOM.idFromName(c.id), { sendBatch: () => Promise.reject(new Error("queue unavailable")) });
    await send(w, c.id, "hello");
    // The task runs; the hand-off after it keeps failing and is tried again every 5 s.
    for (let i = 0; i < 10 && (await peek(w, c.id))[0]?.status !== "success"; i++) await runNextAlarm(room(c.id), clock);
    expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "success" });
    await vi.waitFor(async () => expect(await outboxOf(c.id)).toMatchObject([{ type: "message.completed", handed_off: 0 }]));
    expect(received).toHaveLength(0);
    // The queue takes messages again; the object restarts.
    endQueueStandIn(env.CHAT_ROOM.idFromName(c.id));
    await evictDurableObject(room(c.id));
    // The restarted object's alarm hands it off.
    await settle(room(c.id), clock);
    await vi.waitFor(async () => expect(await outboxOf(c.id)).toMatchObject([{ handed_off: 1 }]));
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 5_000 });
  });

  it("never holds up the chat: a receiver that takes its time changes nothing for the next message", async () => {
    const received = fakeReceiver(() => new Promise((resolve) => setTimeout(() => resolve(new Response("late")), 2_000)));
    const clock = frozenClock();
    const w = await world();
    const hook = await register(w, "https://receiver.example.com/slow");
    const c = await newChat(w);
    await send(w, c.id, "first");
    await settle(room(c.id), clock);
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 5_000 });
    // The receiver is still answering the first delivery; the chat goes on at once.
    await send(w, c.id, "second");
    await settle(room(c.id), clock);
    const replies = (await peek(w, c.id)).filter((m) => m.role === "owner");
    expect(replies.map((m) => m.status)).toEqual(["success", "success"]);
    expect((await deliveriesOf(w, hook.json.endpoint.id)).some((d: { status: string }) => d.status === "pending")).toBe(true);
  });

  it("makes one attempt when two copies of a message arrive, and none ahead of the schedule", async () => {
    const received = fakeReceiver(() => new Response("no", { status: 503 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/twice", clock);
    const [one, two] = await Promise.all([deliver(task, clock.now()), deliver(task, clock.now())]);
    expect([one, two].sort()).toEqual([5, undefined]);
    expect(received).toHaveLength(1);
    // A copy that comes a minute before the retry's time does nothing; the retry itself goes.
    clock.advance(1_000);
    expect(await deliver(task, clock.now())).toBeUndefined();
    clock.advance(4_000);
    expect(await deliver(task, clock.now())).toBe(300);
    expect(received).toHaveLength(2);
    expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ attempts: 2, status: "pending" });
  });

  it("starts no attempt after the endpoint was deleted, also one already scheduled", async () => {
    const received = fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/gone", clock);
    expect(await deliver(task, clock.now())).toBe(5);
    expect((await call("DELETE", `${hooksPath(w)}/${task.endpointId}`, { token: w.token })).status).toBe(204);
    clock.advance(5_000);
    expect(await deliver(task, clock.now())).toBeUndefined();
    expect(received).toHaveLength(1);
  });

  it("fails a delivery whose secret can no longer be opened (WEBHOOK_KEY changed), without an attempt", async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/rekeyed", clock);
    standInWebhookKey(env.PROJECT_WEBHOOKS.idFromName(w.projectId), "another key");
    expect(await deliver(task, clock.now())).toBeUndefined();
    expect(received).toHaveLength(0);
    expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ status: "failed", attempts: 0, lastError: expect.stringContaining("WEBHOOK_KEY changed") });
  });

  it("hands each message to its project's object and acks it; one whose project cannot be asked is retried after 5 s (the consumer)", async () => {
    fakeReceiver();
    const clock = frozenClock();
    const { task } = await eventFor("https://receiver.example.com/consumer", clock);
    const handed = await consumeBatch([task]);
    expect(handed.explicitAcks).toEqual(["m0"]);
    expect(handed.retryMessages).toEqual([]);
    vi.spyOn(ProjectWebhooks.prototype, "start").mockRejectedValueOnce(new Error("Network connection lost."));
    const lost = await consumeBatch([task]);
    expect(lost.retryMessages).toEqual([{ msgId: "m0" }]);
    expect(lost.retries[0]).toHaveBeenCalledWith({ delaySeconds: RETRY_DELAYS_S[0] });
    expect(lost.explicitAcks).toEqual([]);
  });

  it("sends submission.failed with the queue entry when a message cannot start", async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    await register(w, "https://receiver.example.com/failed", { events: ["submission.failed"] });
    const c = await newChat(w);
    const sent = await send(w, c.id, "no credits for this");
    await settle(room(c.id), clock);
    // Only this endpoint's: the queue may still carry earlier tests' deliveries to their receivers.
    const mine = () => received.filter((r) => r.url === "https://receiver.example.com/failed");
    await vi.waitFor(() => expect(mine()).toHaveLength(1), { timeout: 10_000 });
    expect(JSON.parse(mine()[0]!.body)).toMatchObject({
      type: "submission.failed",
      data: { projectId: w.projectId, chatId: c.id, entry: { id: sent.json.submissionId, content: "no credits for this", status: "failed" } },
    });
  }, 15_000);
});
