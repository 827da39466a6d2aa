import { describe, expect, it, vi } from "vitest";
import { OVERDUE_MS, ProjectWebhooks, SUBMISSION_FAILED_PER_MINUTE } from "../../src/webhooks/project-webhooks";
import { webhookIdOf } from "../../src/webhooks/signature";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { env, newChat, room, send, world } from "../helpers";
import { standInQueue } from "../doubles/stand-ins";
import { consumeBatch, deliveriesOf, eventFor, fakeReceiver, hooks, outboxOf, recordingEvents, recordQueued, register } from "./webhook-helpers";
import type { WebhookTask } from "../../src/chats/webhook-task";

describe("webhook tenants", () => {
  it("a batch is done while ten receivers of one project hang, and another project's first attempt goes out meanwhile", async () => {
    // A hanging receiver answers once released; it polls from the object's own context, where its request was made.
    let released = false;
    let hanging = 0;
    const answerWhenReleased = () => {
      hanging++;
      return new Promise<Response>((resolve) => {
        const check = () => (released ? resolve(new Response("late")) : setTimeout(check, 20));
        check();
      });
    };
    const received = fakeReceiver((got) => (got.url.includes("/hang-") ? answerWhenReleased() : new Response("ok")));
    const clock = frozenClock();
    const { w: slow, task } = await eventFor("https://receiver.example.com/hang-0", clock);
    const slowTasks = [task];
    for (let i = 1; i < 10; i++) {
      const hook = await register(slow, `https://receiver.example.com/hang-${i}`, { events: ["chat.awaiting_user"] });
      slowTasks.push({ ...task, endpointId: hook.json.endpoint.id });
    }
    const { w: fast, task: fastTask } = await eventFor("https://receiver.example.com/fast", clock);
    // Resolves although no hanging receiver has answered: the attempts run in the project's object, not in the batch.
    const result = await consumeBatch([...slowTasks, fastTask]);
    expect(result.explicitAcks).toHaveLength(11);
    await vi.waitFor(() => expect(received.filter((r) => r.url === "https://receiver.example.com/fast")).toHaveLength(1));
    await vi.waitFor(async () => expect((await deliveriesOf(fast, fastTask.endpointId))[0]).toMatchObject({ status: "delivered", attempts: 1 }));
    await vi.waitFor(() => expect(hanging).toBe(10));
    expect((await deliveriesOf(slow, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 1 });
    released = true;
    await vi.waitFor(async () => expect((await deliveriesOf(slow, task.endpointId))[0]).toMatchObject({ status: "delivered" }));
  });

  it("a failing receiver's retries are handed to the queue by its project's alarm on the schedule (5 s, then 5 min)", async () => {
    const received = fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/failing", clock);
    const queued = recordQueued(w.projectId);
    const stub = hooks(w.projectId);
    expect((await consumeBatch([task])).explicitAcks).toEqual(["m0"]);
    await vi.waitFor(async () => expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 1 }));
    const firstAt = clock.now();
    expect((await deliveriesOf(w, task.endpointId))[0].nextAttemptAt).toBe(new Date(firstAt + 5_000).toISOString());
    // Nothing goes before its time; at its time the alarm hands the retry over.
    expect(queued).toEqual([]);
    expect(await alarmOf(stub)).toBe(firstAt + 5_000);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([{ body: task, delaySeconds: undefined }]);
    await consumeBatch([queued[0]!.body]);
    await vi.waitFor(async () => expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ attempts: 2 }));
    const secondAt = clock.now();
    while (queued.length < 2 && (await runNextAlarm(stub, clock))) {}
    expect(queued).toHaveLength(2);
    expect(clock.now()).toBe(secondAt + 300_000 + 1);
    expect(received).toHaveLength(2);
  });

  it("a retry whose message was lost is handed to the queue again by the alarm, once per step of the schedule", async () => {
    fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/lost", clock);
    // Every message the object sends is lost: recorded, never delivered.
    const queued = recordQueued(w.projectId);
    const stub = hooks(w.projectId);
    expect(await stub.attempt(task, clock.now())).toBe(5);
    const firstAt = clock.now();
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toHaveLength(1);
    // The retry did not begin: once overdue it is handed over again, and then no more for this step.
    expect(await alarmOf(stub)).toBe(firstAt + 5_000 + OVERDUE_MS);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([
      { body: task, delaySeconds: undefined },
      { body: task, delaySeconds: undefined },
    ]);
    expect(await alarmOf(stub)).toBeNull();
    // The second copy arrives; its attempt fails and the next step is handed over (and again) in turn.
    expect(await stub.attempt(queued[1]!.body, clock.now())).toBe(300);
    const secondAt = clock.now();
    while (queued.length < 4 && (await runNextAlarm(stub, clock))) {}
    expect(queued).toHaveLength(4);
    expect(clock.now()).toBe(secondAt + 300_000 + OVERDUE_MS + 1);
    expect(await alarmOf(stub)).toBeNull();
    expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 2 });
  });

  it("an attempt that never reports (its object restarted under it) is handed over again after its claim ends", async () => {
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/cut-off", clock);
    const queued = recordQueued(w.projectId);
    const stub = hooks(w.projectId);
    const plan = await stub.beginAttempt(task.endpointId, await webhookIdOf(task.eventId, task.endpointId), task.type, clock.now(), task);
    expect(plan.kind).toBe("attempt");
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([{ body: task, delaySeconds: undefined }]);
  });

  it("a retry the queue cannot take now is handed over again by the alarm 30 s later, nothing marked meanwhile", async () => {
    fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/queue-down", clock);
    const stub = hooks(w.projectId);
    expect(await stub.attempt(task, clock.now())).toBe(5);
    let down = true;
    const queued: WebhookTask[] = [];
    standInQueue(env.PROJECT_WEBHOOKS.idFromName(w.projectId), {
      sendBatch: async (messages) => {
        if (down) throw new Error("Queue send failed: unavailable");
        queued.push(...[...messages].map((m) => m.body));
      },
    });
    expect(await runNextAlarm(stub, clock)).toBe(true);
    const failedAt = clock.now();
    expect(queued).toEqual([]);
    expect(await alarmOf(stub)).toBe(failedAt + 30_000);
    down = false;
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([task]);
  });

  it("a chat's hand-off that hangs is taken as lost after 30 s, and its alarm hands the events over again", async () => {
    const clock = frozenClock();
    const w = await world();
    await register(w, "https://receiver.example.com/after-hang", { events: ["message.completed"] });
    // The first ask for the project's subscriptions never answers.
    vi.spyOn(ProjectWebhooks.prototype, "subscriptions").mockImplementationOnce(() => new Promise(() => {}));
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await settle(room(c.id), clock);
    expect((await outboxOf(c.id)).map((e) => [e.type, e.handed_off])).toEqual([["message.completed", 1]]);
  });

  it("the consumer waits twice as long each time a message's project cannot be asked", async () => {
    const clock = frozenClock();
    const { task } = await eventFor("https://receiver.example.com/object-down", clock);
    vi.spyOn(ProjectWebhooks.prototype, "start").mockRejectedValue(new Error("Network connection lost."));
    const delays: unknown[] = [];
    for (const attempts of [1, 2, 3, 10, 20]) delays.push((await consumeBatch([task], attempts)).retries[0]!.mock.calls[0]?.[0]);
    expect(delays).toEqual([{ delaySeconds: 5 }, { delaySeconds: 10 }, { delaySeconds: 20 }, { delaySeconds: 2560 }, { delaySeconds: 3600 }]);
  });

  it(`submission.failed, which a sender causes at no cost, reaches an endpoint at most ${SUBMISSION_FAILED_PER_MINUTE} times a minute`, async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    await recordingEvents(w, "message.completed");
    const c = await newChat(w);
    for (let i = 0; i < SUBMISSION_FAILED_PER_MINUTE + 2; i++) {
      expect((await send(w, c.id, `no credits ${i}`)).status).toBe(202);
      await settle(room(c.id), clock);
    }
    // Registered after the events were handed off, so only this test's batch carries them.
    const hook = await register(w, "https://receiver.example.com/free-events", { events: ["submission.failed"] });
    const events = (await outboxOf(c.id)).filter((e) => e.type === "submission.failed");
    expect(events).toHaveLength(SUBMISSION_FAILED_PER_MINUTE + 2);
    const tasks = events.map((e): WebhookTask => ({ projectId: w.projectId, chatId: c.id, eventId: e.id, endpointId: hook.json.endpoint.id, type: "submission.failed" }));
    // Only this endpoint's: the local queue may still carry an earlier test's delivery to its receiver.
    const mine = () => received.filter((r) => r.url === "https://receiver.example.com/free-events");
    expect((await consumeBatch(tasks.slice(0, -1))).explicitAcks).toHaveLength(tasks.length - 1);
    await vi.waitFor(() => expect(mine()).toHaveLength(SUBMISSION_FAILED_PER_MINUTE));
    expect(await deliveriesOf(w, hook.json.endpoint.id)).toHaveLength(SUBMISSION_FAILED_PER_MINUTE);
    // A minute later the endpoint gets them again; other event types were never limited.
    clock.advance(60_001);
    await consumeBatch(tasks.slice(-1));
    await vi.waitFor(() => expect(mine()).toHaveLength(SUBMISSION_FAILED_PER_MINUTE + 1));
  });
});
