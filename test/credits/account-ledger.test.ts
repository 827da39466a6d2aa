import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import type { AccountLedger } from "../../src/credits/account-ledger";
import { frozenClock, settle } from "../clock";
import { SENT_BY_TEST, admin, env, ledger, newAccount, peek, room } from "../helpers";

const tablesOf = (accountId: string) =>
  runInDurableObject(ledger(accountId), (_: AccountLedger, state) =>
    state.storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .toArray()
      .map((r) => r.name),
  );

/** An account from before balances moved to ledgers: in D1 only, its ledger never used. */
async function accountInD1Only(credits: number, charges: { taskId: string; amount: number; chargedAt: Date }[] = []) {
  const id = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO accounts (id, email, password_hash, credits, created_at) VALUES (?, ?, 'x', ?, ?)")
    .bind(id, `legacy-${id}@example.test`, credits, new Date().toISOString())
    .run();
  for (const c of charges) {
    // D1's triggers took the charge from accounts.credits, as the old charge did.
    await env.DB.prepare("INSERT INTO credit_charges (task_id, account_id, amount, charged_at) VALUES (?, ?, ?, ?)").bind(c.taskId, id, c.amount, c.chargedAt.toISOString()).run();
  }
  return id;
}

describe("AccountLedger", () => {
  it("charges a task once however often the charge is retried, and refunds it once", async () => {
    const { id } = await newAccount(10);
    const task = crypto.randomUUID();
    expect(await ledger(id).charge(id, task, 3)).toBe("charged");
    expect(await ledger(id).charge(id, task, 3)).toBe("charged");
    expect(await ledger(id).balance(id)).toBe(7);
    await ledger(id).refund(id, task);
    await ledger(id).refund(id, task);
    expect(await ledger(id).balance(id)).toBe(10);
    // A refunded task stays charged-once: its retried charge does not take the credits again.
    expect(await ledger(id).charge(id, task, 3)).toBe("charged");
    expect(await ledger(id).balance(id)).toBe(10);
  });

  it("refunds nothing for a task it never charged", async () => {
    const { id } = await newAccount(10);
    await ledger(id).refund(id, crypto.randomUUID());
    expect(await ledger(id).balance(id)).toBe(10);
  });

  it("never goes below zero, however many chats charge at once", async () => {
    const { id } = await newAccount(5);
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => ledger(id).charge(id, crypto.randomUUID(), 1)));
    expect(outcomes.filter((o) => o === "charged")).toHaveLength(5);
    expect(outcomes.filter((o) => o === "insufficient")).toHaveLength(7);
    expect(await ledger(id).balance(id)).toBe(0);
  });

  it("keeps charges and refunds through eviction between every step", async () => {
    const { id } = await newAccount(10);
    const task = crypto.randomUUID();
    expect(await ledger(id).charge(id, task, 4)).toBe("charged");
    await evictDurableObject(ledger(id));
    expect(await ledger(id).charge(id, task, 4)).toBe("charged");
    expect(await ledger(id).balance(id)).toBe(6);
    await ledger(id).refund(id, task);
    await evictDurableObject(ledger(id));
    await ledger(id).refund(id, task);
    expect(await ledger(id).balance(id)).toBe(10);
  });

  it("stores nothing for an account that does not exist", async () => {
    const id = crypto.randomUUID();
    expect(await ledger(id).balance(id)).toBeNull();
    expect(await ledger(id).charge(id, crypto.randomUUID(), 1)).toBe("insufficient");
    expect(await ledger(id).setBalance(id, 5)).toBeNull();
    expect(await ledger(id).moveFromD1(id)).toBe("no_account");
    expect(await tablesOf(id)).toEqual([]);
  });

  it("is what the operator's credit calls set and read", async () => {
    const { id } = await newAccount(10);
    expect((await admin("PATCH", `/admin/accounts/${id}`, { credits: 25 })).json.credits).toBe(25);
    expect(await ledger(id).balance(id)).toBe(25);
    expect(await ledger(id).charge(id, crypto.randomUUID(), 1)).toBe("charged");
    expect((await admin("PATCH", `/admin/accounts/${id}`, {})).json.credits).toBe(24);
  });

  it("brings an older account's D1 balance and recent charges the first time it is used", async () => {
    const recent = crypto.randomUUID();
    const old = crypto.randomUUID();
    const id = await accountInD1Only(50, [
      { taskId: recent, amount: 1, chargedAt: new Date(Date.now() - 60_000) },
      { taskId: old, amount: 1, chargedAt: new Date(Date.now() - 40 * 86_400_000) },
    ]);
    const { credits } = (await env.DB.prepare("SELECT credits FROM accounts WHERE id = ?").bind(id).first<{ credits: number }>())!;
    // A task charged in D1 just before the move is not charged again when its chat retries.
    expect(await ledger(id).charge(id, recent, 1)).toBe("charged");
    expect(await ledger(id).balance(id)).toBe(credits);
    await ledger(id).refund(id, recent);
    expect(await ledger(id).balance(id)).toBe(credits + 1);
    expect(await ledger(id).moveFromD1(id)).toBe("already_moved");
  });

  it("finishes a task its chat charged in D1 before the move, without charging it again", async () => {
    const clock = frozenClock();
    const taskId = crypto.randomUUID();
    const accountId = await accountInD1Only(30);
    const projectId = crypto.randomUUID();
    await env.DB.batch([
      env.DB.prepare("INSERT INTO projects (id, name, owner_account_id, status, created_at) VALUES (?, 'legacy', ?, 'active', ?)").bind(
        projectId,
        accountId,
        new Date().toISOString(),
      ),
      env.DB.prepare("INSERT INTO project_members (project_id, account_id, role) VALUES (?, ?, 'owner')").bind(projectId, accountId),
    ]);
    const chatId = crypto.randomUUID();
    const chat = room(chatId);
    await chat.create(chatId, projectId, "legacy chat");
    const at = Date.now();
    const seen = { maintenance: { value: false, at }, project: { value: { status: "active" as const, ownerAccountId: accountId }, at } };
    expect((await chat.submit(projectId, { kind: "send", idempotencyKey: "k", content: "charged before the move", replyToMessageId: null, ...SENT_BY_TEST, seen })).kind).toBe(
      "accepted",
    );
    // The old code stored the task id, then D1 took the charge; the object stopped there (no account recorded).
    await runInDurableObject(chat, async (_: ChatRoom, state) => {
      state.storage.sql.exec("UPDATE submissions SET status = 'dispatching', task_id = ?, account_id = NULL", taskId);
    });
    await env.DB.prepare("INSERT INTO credit_charges (task_id, account_id, amount, charged_at) VALUES (?, ?, 1, ?)").bind(taskId, accountId, new Date().toISOString()).run();
    const afterD1Charge = (await env.DB.prepare("SELECT credits FROM accounts WHERE id = ?").bind(accountId).first<{ credits: number }>())!.credits;
    clock.advance(60_000);
    await settle(chat, clock);
    const [reply] = await peek({ projectId }, chatId);
    expect(reply).toMatchObject({ role: "owner", status: "success", taskId });
    expect(await ledger(accountId).balance(accountId)).toBe(afterD1Charge);
  });
});
