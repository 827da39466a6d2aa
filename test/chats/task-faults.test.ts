import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, vi } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { AccountLedger } from "../../src/credits/account-ledger";
import { alarmOf, frozenClock, runNextAlarm, settle, type Clock } from "../clock";
import { chatOf, creditsOf, historyOf, ledger, newChat, peek, queueOf, replies, room, roomChat, send, world, type World } from "../helpers";
import { it } from "../fixtures/chat";

const charges = (accountId: string, taskId: string) =>
  runInDurableObject(ledger(accountId), (_: AccountLedger, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM charges WHERE task_id = ?", taskId).one().n);
const sql = (chatId: string, query: string, ...bindings: unknown[]) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) => state.storage.sql.exec(query, ...bindings).toArray());

/** Evicts the object before each of its alarms, as a restart between every step would, until none is left. */
async function restartAtEveryStep(chatId: string, clock: Clock) {
  for (let i = 0; i < 40; i++) {
    await evictDurableObject(room(chatId));
    if (!(await runNextAlarm(room(chatId), clock))) return;
  }
  throw new Error("the chat did not settle");
}

/** Puts a chat's only submission in the state it would have if the object died at that step. */
async function stopAt(w: World, step: "accepted" | "task-assigned" | "charged") {
  const c = await newChat(w);
  // The clock is frozen an hour ahead, so the alarm the send sets never fires by itself: the test removes it.
  await send(w, c.id, `stopped at ${step}`);
  await runInDurableObject(room(c.id), async (_: ChatRoom, state) => {
    await state.storage.deleteAlarm();
  });
  const taskId = crypto.randomUUID();
  // The task id and the paying account are stored together, before the charge.
  if (step !== "accepted") await sql(c.id, "UPDATE submissions SET status = 'dispatching', task_id = ?, account_id = ?", taskId, w.account.id);
  if (step === "charged") expect(await ledger(w.account.id).charge(w.account.id, taskId, 1)).toBe("charged");
  // The alarm that was running when the object died is still scheduled; the runtime retries it.
  await runInDurableObject(room(c.id), async (_: ChatRoom, state) => {
    await state.storage.setAlarm(Date.now() + 60_000);
  });
  return { chatId: c.id, taskId };
}

describe("a task interrupted at each step", () => {
  it.each(["accepted", "task-assigned", "charged"] as const)("finishes once, charged once, after a restart at %s", async (step) => {
    const clock = frozenClock();
    const w = await world();
    const { chatId, taskId } = await stopAt(w, step);
    await restartAtEveryStep(chatId, clock);
    const items = await peek(w, chatId);
    expect(items.map((m) => [m.role, m.status])).toEqual([
      ["owner", "success"],
      ["user", null],
    ]);
    if (step !== "accepted") {
      expect(items[0]!.taskId).toBe(taskId);
      expect(await charges(w.account.id, taskId)).toBe(1);
    }
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await roomChat(chatId, w.projectId)).isWorking).toBe(false);
  });

  it("finishes a running task after a restart", async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock);
    expect((await peek(w, chat.id)).map((m) => [m.role, m.status])).toEqual([
      ["owner", "working"],
      ["user", null],
    ]);
    await restartAtEveryStep(chat.id, clock);
    expect((await peek(w, chat.id)).filter((m) => m.role === "owner").map((m) => m.status)).toEqual(["success"]);
    expect(await creditsOf(w.account.id)).toBe(999);
  });
});

describe("eviction", () => {
  it("loses nothing and finishes the task when the object is evicted mid-task", async ({ clock, w, chat }) => {
    await send(w, chat.id, "survive");
    await send(w, chat.id, "and me");
    await runNextAlarm(room(chat.id), clock);
    await evictDurableObject(room(chat.id));
    await settle(room(chat.id), clock);
    const page = await historyOf(w, chat.id);
    expect(replies(page)).toHaveLength(2);
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["and me", "survive"]);
    expect((await chatOf(w, chat.id)).isWorking).toBe(false);
    expect(await creditsOf(w.account.id)).toBe(998);
  });

  it("finishes a task whose object was evicted between its steps, from the alarm", async ({ clock, w, chat }) => {
    await send(w, chat.id, "step by step");
    await restartAtEveryStep(chat.id, clock);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(1);
    expect((await chatOf(w, chat.id)).isWorking).toBe(false);
    expect(await creditsOf(w.account.id)).toBe(999);
  });
});

describe("a ledger that cannot be reached", () => {
  it("keeps the submission and retries the charge, losing nothing and charging once", async ({ clock, w, chat }) => {
    const charge = vi.spyOn(AccountLedger.prototype, "charge").mockRejectedValueOnce(new Error("Network connection lost."));
    expect((await send(w, chat.id, "while the ledger is away")).status).toBe(202);
    // The alarm tries to charge, fails, and keeps the submission for a later try.
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    expect(await alarmOf(room(chat.id)), "a retry is scheduled").toBeGreaterThan(clock.now());
    expect((await queueOf(w, chat.id)).items.map((e) => e.content)).toEqual(["while the ledger is away"]);
    expect(await peek(w, chat.id)).toEqual([]);
    await settle(room(chat.id), clock);
    expect(charge).toHaveBeenCalledTimes(2);
    const items = await peek(w, chat.id);
    expect(items.map((m) => [m.role, m.status])).toEqual([
      ["owner", "success"],
      ["user", null],
    ]);
    expect(await creditsOf(w.account.id)).toBe(999);
    expect(await charges(w.account.id, items[0]!.taskId!)).toBe(1);
  });
});
