import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ChatRoom } from "../../src/chats/chat-room";
import { chatsPath, call, creditsOf, env, eventually, newChat, peek, send, world, type World } from "../helpers";

const stubOf = (chatId: string) => env.CHAT_ROOM.getByName(chatId);
const charges = async (taskId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM credit_charges WHERE task_id = ?").bind(taskId).first<{ n: number }>())!.n;
const sql = (chatId: string, query: string, ...bindings: unknown[]) =>
  runInDurableObject(stubOf(chatId), (_: ChatRoom, state) => state.storage.sql.exec(query, ...bindings).toArray());

/** Evicts the object and runs its alarm until the chat settles, as a restart would. */
async function restartUntilSettled(w: World, chatId: string) {
  for (let i = 0; i < 40; i++) {
    await evictDurableObject(stubOf(chatId)).catch(() => undefined);
    await runDurableObjectAlarm(stubOf(chatId));
    const items = await peek(w, chatId);
    if (items.some((m) => m.role === "owner" && m.status !== "working") || items.some((m) => m.role === "error")) return items;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error("the chat did not settle");
}

/** Puts a chat's only submission in the state it would have if the object died at that step. */
async function stopAt(w: World, step: "accepted" | "task-assigned" | "charged") {
  const c = await newChat(w);
  await call("PUT", "/admin/maintenance", { token: "test-admin-token", body: { enabled: true } });
  await send(w, c.id, `stopped at ${step}`);
  await call("PUT", "/admin/maintenance", { token: "test-admin-token", body: { enabled: false } });
  await runInDurableObject(stubOf(c.id), async (_: ChatRoom, state) => {
    await state.storage.deleteAlarm();
  });
  const taskId = crypto.randomUUID();
  if (step !== "accepted") await sql(c.id, "UPDATE submissions SET status = 'dispatching', task_id = ?", taskId);
  if (step === "charged") {
    await env.DB.prepare("INSERT INTO credit_charges (task_id, account_id, amount, charged_at) VALUES (?, ?, 1, ?)").bind(taskId, w.account.id, new Date().toISOString()).run();
  }
  // The alarm that was running when the object died is still scheduled; the runtime retries it.
  await runInDurableObject(stubOf(c.id), async (_: ChatRoom, state) => {
    await state.storage.setAlarm(Date.now() + 60_000);
  });
  return { chatId: c.id, taskId };
}

describe("a task interrupted at each step", () => {
  it.each(["accepted", "task-assigned", "charged"] as const)("finishes once, charged once, after a restart at %s", async (step) => {
    const w = await world();
    const { chatId, taskId } = await stopAt(w, step);
    const items = await restartUntilSettled(w, chatId);
    const reply = await eventually("the reply", async () => (await peek(w, chatId)).find((m) => m.role === "owner" && m.status === "success"));
    expect(items.filter((m) => m.role === "user")).toHaveLength(1);
    if (step !== "accepted") {
      expect(reply.taskId).toBe(taskId);
      expect(await charges(taskId)).toBe(1);
    }
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await stubOf(chatId).get(w.projectId))!.isWorking).toBe(false);
  });

  it("finishes a running task after a restart", async () => {
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "running");
    await eventually("the task to start", async () => (await peek(w, c.id)).some((m) => m.status === "working" || m.status === "success"));
    const items = await restartUntilSettled(w, c.id);
    expect(items.filter((m) => m.role === "owner").map((m) => m.status)).toEqual(["success"]);
  });
});

describe("D1 failures", () => {
  it("retries a charge that D1 refused, losing nothing", async () => {
    const w = await world();
    const c = await newChat(w);
    await env.DB.exec("ALTER TABLE credit_charges RENAME TO credit_charges_offline");
    try {
      expect((await send(w, c.id, "while D1 fails")).status).toBe(202);
      await new Promise((r) => setTimeout(r, 200));
      const queue = (await call("GET", `${chatsPath(w)}/${c.id}/queue`, { token: w.token })).json.items;
      expect(queue.map((e: { content: string }) => e.content)).toEqual(["while D1 fails"]);
    } finally {
      await env.DB.exec("ALTER TABLE credit_charges_offline RENAME TO credit_charges");
    }
    await runDurableObjectAlarm(stubOf(c.id));
    const reply = await eventually("the reply", async () => (await peek(w, c.id)).find((m) => m.role === "owner" && m.status === "success"));
    expect(reply.content).toContain("while D1 fails");
    expect(await creditsOf(w.account.id)).toBe(999);
  });
});
