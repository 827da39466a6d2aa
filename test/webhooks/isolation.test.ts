import { afterEach, describe, expect, it, vi } from "vitest";
import { consumeWebhookBatch, type WebhookTask } from "../../src/webhooks/delivery";
import { OVERDUE_MS, SUBMISSION_FAILED_PER_MINUTE } from "../../src/webhooks/project-webhooks";
import { webhookIdOf } from "../../src/webhooks/signature";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { call, env, newChat, room, send, world, type World } from "../helpers";
import { eventFor, fakeReceiver, hooksPath, outboxOf, recordQueued, register } from "./webhook-helpers";

afterEach(() => vi.restoreAllMocks());

const deliveriesOf = async (w: World, endpointId: string) => (await call("GET", `${hooksPath(w)}/${endpointId}/deliveries`, { token: w.token })).json.items;
const hooks = (projectId: string) => env.PROJECT_WEBHOOKS.getByName(projectId);

/** A queue batch as the consumer gets it, each message's ack and retry recorded. */
function batchOf(tasks: WebhookTask[]) {
  const messages = tasks.map((body) => ({ body, ack: vi.fn(), retry: vi.fn() }));
  return { messages, batch: { messages } as unknown as MessageBatch<WebhookTask> };
}

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
    const { messages, batch } = batchOf([...slowTasks, fastTask]);
    // Resolves although no hanging receiver has answered: the attempts run in the project's object, not in the batch.
    await consumeWebhookBatch(batch, env);
    for (const m of messages) expect(m.ack).toHaveBeenCalled();
    await vi.waitFor(() => expect(received.filter((r) => r.url === "https://receiver.example.com/fast")).toHaveLength(1));
    await vi.waitFor(async () => expect((await deliveriesOf(fast, fastTask.endpointId))[0]).toMatchObject({ status: "delivered", attempts: 1 }));
    await vi.waitFor(() => expect(hanging).toBe(10));
    expect((await deliveriesOf(slow, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 1 });
    released = true;
    await vi.waitFor(async () => expect((await deliveriesOf(slow, task.endpointId))[0]).toMatchObject({ status: "delivered" }));
  });

  it("a failing receiver's retries are queued by its project's object on the schedule (5 s, then 5 min)", async () => {
    const received = fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/failing", clock);
    const queued = await recordQueued(w.projectId);
    const first = batchOf([task]);
    await consumeWebhookBatch(first.batch, env);
    expect(first.messages[0]!.ack).toHaveBeenCalled();
    await vi.waitFor(() => expect(queued).toEqual([{ body: task, delaySeconds: 5 }]));
    expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: new Date(clock.now() + 5_000).toISOString() });
    clock.advance(5_000);
    await consumeWebhookBatch(batchOf([queued[0]!.body]).batch, env);
    await vi.waitFor(() => expect(queued.map((q) => q.delaySeconds)).toEqual([5, 300]));
    expect(received).toHaveLength(2);
  });

  it("a pending delivery whose message was lost is handed to the queue again by the alarm, once per step of the schedule", async () => {
    fakeReceiver(() => new Response("no", { status: 500 }));
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/lost", clock);
    // Every message the object sends is lost: recorded, never delivered.
    const queued = await recordQueued(w.projectId);
    const stub = hooks(w.projectId);
    expect(await stub.attempt(task, clock.now())).toBe(5);
    const firstTime = clock.now();
    expect(await alarmOf(stub)).toBe(firstTime + 5_000 + OVERDUE_MS);
    // Not before it is overdue.
    expect(queued).toHaveLength(0);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([{ body: task, delaySeconds: undefined }]);
    // Handed over once for this step: no alarm is left for it.
    expect(await alarmOf(stub)).toBeNull();
    // The handed-over message arrives; its attempt fails and its retry is lost too: handed over once more, 5 min later.
    expect(await stub.attempt(queued[0]!.body, clock.now())).toBe(300);
    const secondTime = clock.now();
    // The claim's own check (had the attempt never reported) comes first and finds nothing overdue.
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toHaveLength(1);
    expect(await alarmOf(stub)).toBe(secondTime + 300_000 + OVERDUE_MS);
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toHaveLength(2);
    expect(await alarmOf(stub)).toBeNull();
    expect((await deliveriesOf(w, task.endpointId))[0]).toMatchObject({ status: "pending", attempts: 2 });
  });

  it("an attempt that never reports (its object restarted under it) is handed over again after its claim ends", async () => {
    const clock = frozenClock();
    const { w, task } = await eventFor("https://receiver.example.com/cut-off", clock);
    const queued = await recordQueued(w.projectId);
    const stub = hooks(w.projectId);
    const plan = await stub.beginAttempt(task.endpointId, await webhookIdOf(task.eventId, task.endpointId), task.type, clock.now(), task);
    expect(plan.kind).toBe("attempt");
    expect(await runNextAlarm(stub, clock)).toBe(true);
    expect(queued).toEqual([{ body: task, delaySeconds: undefined }]);
  });

  it(`submission.failed, which a sender causes at no cost, reaches an endpoint at most ${SUBMISSION_FAILED_PER_MINUTE} times a minute`, async () => {
    const received = fakeReceiver();
    const clock = frozenClock();
    const w = await world({ credits: 0 });
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
    const { messages, batch } = batchOf(tasks.slice(0, -1));
    await consumeWebhookBatch(batch, env);
    for (const m of messages) expect(m.ack).toHaveBeenCalled();
    await vi.waitFor(() => expect(received).toHaveLength(SUBMISSION_FAILED_PER_MINUTE));
    expect(await deliveriesOf(w, hook.json.endpoint.id)).toHaveLength(SUBMISSION_FAILED_PER_MINUTE);
    // A minute later the endpoint gets them again; other event types were never limited.
    clock.advance(60_001);
    await consumeWebhookBatch(batchOf(tasks.slice(-1)).batch, env);
    await vi.waitFor(() => expect(received).toHaveLength(SUBMISSION_FAILED_PER_MINUTE + 1));
  });
});
