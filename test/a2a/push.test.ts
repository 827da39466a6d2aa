import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, vi } from "vitest";
import { signWebhook } from "../../src/webhooks/signature";
import { toBase64 } from "../../src/crypto";
import { settle } from "../clock";
import { call, env, newToken, room } from "../helpers";
import { it } from "../fixtures/chat";
import { consumeBatch, fakeReceiver, hooks, type Received } from "../webhooks/webhook-helpers";
import { standInQueue } from "../doubles/stand-ins";
import type { WebhookTask } from "../../src/chats/webhook-task";
import { agentPath, errorOf, legacyRpc, reasonsOf, resultOf, rpc, userMessage } from "./a2a-helpers";

const RECEIVER = "https://receiver.example.com/a2a";
const TOKEN = "push-token-0123456789";
const immediately = { returnImmediately: true };

/** A task of the chat, queued (the clock is frozen: nothing runs until the test settles the chat). */
async function queuedTask(w: { token: string; projectId: string }, chatId: string, text = "hello", configuration: Record<string, unknown> = {}) {
  const { task } = await resultOf(
    rpc(w.token, w.projectId, "SendMessage", { message: userMessage(text, { contextId: chatId }), configuration: { ...immediately, ...configuration } }),
  );
  return task as { id: string; contextId: string };
}

const create = (w: { token: string; projectId: string }, taskId: string, config: Record<string, unknown>) =>
  rpc(w.token, w.projectId, "CreateTaskPushNotificationConfig", { taskId, url: RECEIVER, ...config });

/** The pushes of one task received (other tests' tasks may still push), once at least `count` have come. */
async function pushes(all: Received[], taskId: string, count: number) {
  const ofTask = () => all.filter((got) => taskOf(JSON.parse(got.body)) === taskId);
  await vi.waitFor(() => expect(ofTask().length).toBeGreaterThanOrEqual(count), { timeout: 10_000 });
  return { bodies: ofTask().map((got) => JSON.parse(got.body)), received: ofTask() };
}
/** The task a push is about: a status update's, a Task's (1.0), or a v0.3 Task's. */
const taskOf = (body: { statusUpdate?: { taskId: string }; task?: { id: string }; id?: string }) => body.statusUpdate?.taskId ?? body.task?.id ?? body.id;

describe("A2A push notification configs", () => {
  // Every push of this file's tasks reaches a fake receiver, also one a test does not look at.
  beforeEach(() => void fakeReceiver());

  it("creates, reads, lists and deletes a task's configs; a token and credentials are never shown again", async ({ w, chat }) => {
    const task = await queuedTask(w, chat.id);
    const made = await resultOf(create(w, task.id, { id: "cfg-1", token: TOKEN, authentication: { scheme: "Bearer", credentials: "receiver-secret" } }));
    expect(made).toEqual({ id: "cfg-1", taskId: task.id, url: RECEIVER, authentication: { scheme: "Bearer" } });
    const unnamed = await resultOf(create(w, task.id, {}));
    expect(unnamed.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(unnamed.authentication).toBeUndefined();
    expect(await resultOf(rpc(w.token, w.projectId, "GetTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" }))).toEqual(made);
    const listed = await resultOf(rpc(w.token, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }));
    expect(listed.configs).toEqual([made, unnamed]);
    expect(JSON.stringify(listed)).not.toContain(TOKEN);
    expect(JSON.stringify(listed)).not.toContain("receiver-secret");
    // Stored sealed: neither is in the chat's storage as text.
    const stored = await runInDurableObject(room(chat.id), (_, state) => JSON.stringify(state.storage.sql.exec("SELECT * FROM push_configs").toArray()));
    expect(stored).not.toContain(TOKEN);
    expect(stored).not.toContain("receiver-secret");
    // The same id replaces; a delete is idempotent, also for an id never made.
    const replaced = await resultOf(create(w, task.id, { id: "cfg-1", url: `${RECEIVER}/2` }));
    expect(replaced).toEqual({ id: "cfg-1", taskId: task.id, url: `${RECEIVER}/2` });
    expect((await resultOf(rpc(w.token, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }))).configs.map((c: { id: string }) => c.id)).toEqual([
      "cfg-1",
      unnamed.id,
    ]);
    for (let i = 0; i < 2; i++) await resultOf(rpc(w.token, w.projectId, "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" }));
    await resultOf(rpc(w.token, w.projectId, "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "never-made" }));
    expect((await errorOf(rpc(w.token, w.projectId, "GetTaskPushNotificationConfig", { taskId: task.id, id: "cfg-1" }))).code).toBe(-32001);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }))).configs).toEqual([unnamed]);
  });

  it("refuses a broken config naming the field, a sixth on a task, a config on an ended task, and a task not found", async ({ clock, w, chat }) => {
    const task = await queuedTask(w, chat.id);
    const refusals: [Record<string, unknown>, string][] = [
      [{ url: "" }, "url"],
      [{ url: "http://receiver.example.com/a2a" }, "url"],
      [{ url: "https://10.0.0.1/a2a" }, "url"],
      [{ url: "https://user:pw@receiver.example.com/a2a" }, "url"],
      [{ token: "short" }, "token"],
      [{ token: "x".repeat(257) }, "token"],
      [{ authentication: { scheme: "Digest", credentials: "c" } }, "authentication.scheme"],
      [{ authentication: { scheme: "Basic", credentials: "" } }, "authentication.credentials"],
      [{ authentication: { scheme: "basic", credentials: "x".repeat(4097) } }, "authentication.credentials"],
      [{ id: "has space" }, "id"],
      [{ id: "x".repeat(65) }, "id"],
    ];
    for (const [config, field] of refusals) {
      const error = await errorOf(create(w, task.id, config));
      expect(error.code, JSON.stringify(config)).toBe(-32602);
      expect(error.message.startsWith(field), `${error.message} names ${field}`).toBe(true);
      expect(error.data).toContainEqual({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description: expect.any(String) }] });
    }
    for (let i = 0; i < 5; i++) await resultOf(create(w, task.id, { id: `c${i}`, authentication: { scheme: "bASIC", credentials: "a:b" } }));
    const sixth = await errorOf(create(w, task.id, { id: "c5" }));
    expect(sixth.code).toBe(-32602);
    expect(sixth.message).toContain("at most 5");
    // Replacing one of the five is no sixth.
    await resultOf(create(w, task.id, { id: "c4" }));
    expect((await errorOf(create(w, crypto.randomUUID(), {}))).code).toBe(-32001);
    await settle(room(chat.id), clock);
    const ended = await errorOf(create(w, task.id, { id: "late" }));
    expect(ended.code).toBe(-32004);
    // Reading needs chat:read, creating chat:write.
    const readOnly = await newToken(w.session, ["chat:read"]);
    const refused = await create({ token: readOnly, projectId: w.projectId }, task.id, {});
    expect(refused.status).toBe(403);
    expect((await resultOf(rpc(readOnly, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }))).configs).toHaveLength(5);
  });

  it("delivers each state the task enters through the webhook pipeline: signed with the token, its headers, the end as the Task", async ({ clock, w, chat }) => {
    const received = fakeReceiver();
    const config = { url: RECEIVER, token: TOKEN, authentication: { scheme: "Bearer", credentials: "receiver-secret" } };
    const task = await queuedTask(w, chat.id, "hello", { taskPushNotificationConfig: config });
    // Created with the task: its state then (WORKING: the chat was idle) is pushed at once.
    const [first] = (await pushes(received, task.id, 1)).bodies;
    expect(first).toEqual({
      statusUpdate: expect.objectContaining({ taskId: task.id, contextId: chat.id, status: expect.objectContaining({ state: "TASK_STATE_WORKING" }) }),
    });
    await settle(room(chat.id), clock);
    const { bodies, received: mine } = await pushes(received, task.id, 2);
    expect(bodies.map((b) => b.statusUpdate?.status.state ?? b.task.status.state)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const end = bodies[1].task;
    expect(end).toMatchObject({ id: task.id, contextId: chat.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(end.artifacts[0].parts[0].text).toContain("hello");
    expect(end.history).toBeUndefined();
    for (const got of mine) {
      expect(got.headers["content-type"]).toBe("application/a2a+json");
      expect(got.headers.authorization).toBe("Bearer receiver-secret");
      expect(got.headers["x-a2a-notification-token"]).toBe(TOKEN);
      // A Standard Webhooks verifier checks it with the secret whsec_ + base64(token).
      const secret = `whsec_${toBase64(new TextEncoder().encode(TOKEN))}`;
      expect(got.headers["webhook-signature"]).toBe(await signWebhook(secret, got.headers["webhook-id"]!, Number(got.headers["webhook-timestamp"]), got.body));
    }
    expect(new Set(mine.map((got) => got.headers["webhook-id"])).size).toBe(2);
    // A replay of the same message adds no second config.
    const configs = await resultOf(rpc(w.token, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }));
    expect(configs.configs).toHaveLength(1);
  });

  it("a config without a token is sent unsigned; INPUT_REQUIRED carries the question; an answer's config joins the task", async ({ clock, w, chat }) => {
    const received = fakeReceiver();
    const task = await queuedTask(w, chat.id, "/choose Which theme? | Light | Dark");
    await resultOf(create(w, task.id, { id: "plain" }));
    // The config and what the task was last pushed as outlive the object.
    await evictDurableObject(room(chat.id));
    await settle(room(chat.id), clock);
    const { bodies, received: mine } = await pushes(received, task.id, 1);
    const waiting = bodies.find((b) => b.statusUpdate?.status.state === "TASK_STATE_INPUT_REQUIRED")!.statusUpdate;
    expect(waiting.status.message.parts[1].data).toMatchObject({ kind: "choice", prompt: "Which theme?", status: "pending" });
    expect(mine[0]!.headers["webhook-signature"]).toBeUndefined();
    expect(mine[0]!.headers["x-a2a-notification-token"]).toBeUndefined();
    expect(mine[0]!.headers.authorization).toBeUndefined();
    const answer = userMessage("Dark", { taskId: task.id, contextId: chat.id });
    await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: answer, configuration: { ...immediately, taskPushNotificationConfig: { id: "second", url: `${RECEIVER}/2` } } }),
    );
    await settle(room(chat.id), clock);
    const ends = async () =>
      (await pushes(received, task.id, 1)).received.filter((got) => JSON.parse(got.body).task?.status.state === "TASK_STATE_COMPLETED").map((got) => got.url);
    await vi.waitFor(async () => expect(await ends()).toHaveLength(2), { timeout: 10_000 });
    expect((await ends()).sort()).toEqual([RECEIVER, `${RECEIVER}/2`]);
  });

  it("a config made through v0.3 gets v0.3 bodies (the Task), and is read, listed and deleted through v0.3", async ({ clock, w, chat }) => {
    const received = fakeReceiver();
    const task = await queuedTask(w, chat.id);
    const set = await legacyRpc(w.token, w.projectId, "tasks/pushNotificationConfig/set", {
      taskId: task.id,
      pushNotificationConfig: { id: "legacy", url: RECEIVER, token: TOKEN },
    });
    expect(set.json.error, set.text).toBeUndefined();
    // get, list and delete through v0.3 too, in its shapes, the token never shown.
    const got = await legacyRpc(w.token, w.projectId, "tasks/pushNotificationConfig/get", { id: task.id, pushNotificationConfigId: "legacy" });
    expect(got.json.result, got.text).toMatchObject({ taskId: task.id, pushNotificationConfig: { id: "legacy", url: RECEIVER } });
    expect(got.text).not.toContain(TOKEN);
    const listed = await legacyRpc(w.token, w.projectId, "tasks/pushNotificationConfig/list", { id: task.id });
    expect(listed.json.result, listed.text).toEqual([expect.objectContaining({ taskId: task.id, pushNotificationConfig: expect.objectContaining({ id: "legacy" }) })]);
    await settle(room(chat.id), clock);
    const { bodies } = await pushes(received, task.id, 1);
    expect(bodies).toEqual([expect.objectContaining({ kind: "task", id: task.id, contextId: chat.id, status: expect.objectContaining({ state: "completed" }) })]);
    const deleted = await legacyRpc(w.token, w.projectId, "tasks/pushNotificationConfig/delete", { id: task.id, pushNotificationConfigId: "legacy" });
    expect(deleted.json.error, deleted.text).toBeUndefined();
    expect((await resultOf(rpc(w.token, w.projectId, "ListTaskPushNotificationConfigs", { taskId: task.id }))).configs ?? []).toEqual([]);
  });

  it("no attempt starts after a delete returns; a receiver's failure is retried on the webhook schedule", async ({ clock, w, chat }) => {
    let fail = true;
    const received = fakeReceiver(() => new Response("down", { status: fail ? 503 : 200 }));
    const task = await queuedTask(w, chat.id);
    await resultOf(create(w, task.id, { id: "flaky" }));
    await resultOf(create(w, task.id, { id: "gone", url: `${RECEIVER}/gone` }));
    await resultOf(rpc(w.token, w.projectId, "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "gone" }));
    await settle(room(chat.id), clock);
    await pushes(received, task.id, 1);
    expect(received.every((got) => !got.url.endsWith("/gone"))).toBe(true);
    const rows = () =>
      runInDurableObject(hooks(w.projectId), (_, state) =>
        state.storage.sql
          .exec<{ status: string; attempts: number; next_attempt_ms: number | null }>("SELECT status, attempts, next_attempt_ms FROM deliveries WHERE endpoint_id LIKE 'push:%'")
          .toArray(),
      );
    await vi.waitFor(async () => expect((await rows()).filter((r) => r.status === "pending" && r.attempts === 1 && r.next_attempt_ms !== null)).toHaveLength(1));
    // The retries come at their time (the project's alarm hands them to the queue), and are then delivered.
    fail = false;
    const before = (await pushes(received, task.id, 1)).received.length;
    await settle(hooks(w.projectId), clock, 5, 10_000);
    await vi.waitFor(async () => expect((await rows()).every((r) => r.status === "delivered")).toBe(true), { timeout: 10_000 });
    expect((await pushes(received, task.id, 1)).received.length).toBe(before + 1);
  });

  it("a config made after a task's last one was deleted starts where the task then stands: no state from before it", async ({ clock, w, chat }) => {
    const received = fakeReceiver();
    const task = await queuedTask(w, chat.id, "/choose Which theme? | Light | Dark");
    await resultOf(create(w, task.id, { id: "old" }));
    await resultOf(rpc(w.token, w.projectId, "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "old" }));
    // It comes to ask while it has no config.
    await settle(room(chat.id), clock);
    await resultOf(create(w, task.id, { id: "new" }));
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("Dark", { taskId: task.id, contextId: chat.id }), configuration: immediately }));
    await settle(room(chat.id), clock);
    const { bodies } = await pushes(received, task.id, 2);
    expect(bodies.map((b) => (b.statusUpdate ?? b.task).status.state)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
  });

  it("a push handed to the queue before its config's delete returned is never attempted after it", async ({ clock, w, chat }) => {
    const received = fakeReceiver();
    const queued: WebhookTask[] = [];
    standInQueue(env.CHAT_ROOM.idFromName(chat.id), { sendBatch: async (messages) => void queued.push(...[...messages].map((m) => m.body)) });
    const task = await queuedTask(w, chat.id);
    await resultOf(create(w, task.id, { id: "late" }));
    await settle(room(chat.id), clock);
    await vi.waitFor(() => expect(queued.filter((t) => t.push?.configId === "late")).toHaveLength(1));
    await resultOf(rpc(w.token, w.projectId, "DeleteTaskPushNotificationConfig", { taskId: task.id, id: "late" }));
    await consumeBatch(queued);
    const rows = () =>
      runInDurableObject(hooks(w.projectId), (_, state) =>
        state.storage.sql.exec<{ status: string; attempts: number; last_error: string }>("SELECT status, attempts, last_error FROM deliveries").toArray(),
      );
    // The attempt runs in the background once its turn comes: it ends without a request.
    await vi.waitFor(async () => expect(await rows()).toEqual([{ status: "failed", attempts: 0, last_error: "the push config was deleted, or its event is no longer kept" }]));
    expect(received.filter((got) => taskOf(JSON.parse(got.body)) === task.id)).toEqual([]);
  });

  it("at most 100 configs across a project's tasks that have not ended; an ended task frees its places", async ({ clock, w }) => {
    const tasks: { id: string; contextId: string }[] = [];
    for (let i = 0; i < 20; i++) {
      // Each minute's requests within the token's count.
      if (i % 8 === 7) clock.advance(61_000);
      const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage(`task ${i}`), configuration: immediately }));
      tasks.push(task);
      // 99 in all: the last task has four.
      await Promise.all([0, 1, 2, 3, 4].slice(0, i === 19 ? 4 : 5).map((n) => resultOf(create(w, task.id, { id: `n${n}` }))));
    }
    clock.advance(61_000);
    const { task: extra } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("one more"), configuration: immediately }));
    // Two at once for the last place, in two chats: one takes it.
    const raced = await Promise.all([create(w, extra.id, {}), create(w, tasks[19]!.id, { id: "n4" })]);
    expect(raced.filter((r) => r.json.error === undefined)).toHaveLength(1);
    const refused = raced.find((r) => r.json.error !== undefined)!.json.error;
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain("at most 100");
    expect((await errorOf(create(w, extra.id, { id: "again" }))).code).toBe(-32602);
    await settle(room(tasks[0]!.contextId), clock);
    await vi.waitFor(async () => expect((await create(w, extra.id, {})).json.error).toBeUndefined(), { timeout: 10_000 });
  });

  it("the card offers push; the HTTP+JSON binding creates, reads, lists and deletes (204)", async ({ w, chat }) => {
    const card = await call("GET", `${agentPath(w.projectId)}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } });
    expect(card.json.capabilities.pushNotifications).toBe(true);
    const task = await queuedTask(w, chat.id);
    const base = `${agentPath(w.projectId)}/rest/tasks/${task.id}/pushNotificationConfigs`;
    const headers = { "a2a-version": "1.0" };
    const made = await call("POST", base, { token: w.token, headers, body: { id: "rest", url: RECEIVER, token: TOKEN } });
    expect(made.status, made.text).toBe(200);
    expect(made.json).toEqual({ id: "rest", taskId: task.id, url: RECEIVER });
    expect((await call("GET", `${base}/rest`, { token: w.token, headers })).json).toEqual(made.json);
    expect((await call("GET", base, { token: w.token, headers })).json).toEqual({ configs: [made.json] });
    const deleted = await call("DELETE", `${base}/rest`, { token: w.token, headers });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    const missing = await call("GET", `${base}/rest`, { token: w.token, headers });
    expect(missing.status).toBe(404);
    const bad = await call("POST", base, { token: w.token, headers, body: { url: "ftp://x" } });
    expect(bad.status).toBe(400);
    expect(reasonsOf({ data: bad.json.error.details })).toContain("INVALID_PARAMS");
    expect(env.WEBHOOK_KEY).toBeDefined();
  });
});
