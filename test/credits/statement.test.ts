import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import type { AccountLedger } from "../../src/credits/account-ledger";
import { frozenClock } from "../clock";
import { admin, call, expectProblem, ledger, newAccount, signIn, world } from "../helpers";
import { it } from "../fixtures/chat";

const statementOf = async (accountId: string, limit = 100, before?: number) => (await ledger(accountId).statementPage(accountId, limit, before))!;
const kinds = (page: { items: { kind: string; credits: number; balanceAfter: number }[] }) => page.items.map((i) => [i.kind, i.credits, i.balanceAfter]);
const ref = () => ({ projectId: crypto.randomUUID(), chatId: crypto.randomUUID(), submissionId: crypto.randomUUID() });

describe("the account's statement", () => {
  it("starts with the opening balance as an adjustment", async () => {
    const { id } = await newAccount(20);
    const page = await statementOf(id);
    expect(page.balance).toBe(20);
    expect(page.items).toEqual([
      { id: expect.any(String), kind: "adjustment", credits: 20, balanceAfter: 20, projectId: null, chatId: null, submissionId: null, createdAt: expect.any(String) },
    ]);
  });

  it("lists each charge and refund once however often they are retried, newest first, with the task's ids", async () => {
    const { id } = await newAccount(10);
    const [task1, task2] = [crypto.randomUUID(), crypto.randomUUID()];
    const [ref1, ref2] = [ref(), ref()];
    for (let i = 0; i < 3; i++) expect(await ledger(id).charge(id, task1, 2, ref1)).toBe("charged");
    expect(await ledger(id).charge(id, task2, 3, ref2)).toBe("charged");
    for (let i = 0; i < 3; i++) await ledger(id).refund(id, task1);
    const page = await statementOf(id);
    expect(kinds(page)).toEqual([
      ["refund", 2, 7],
      ["charge", -3, 5],
      ["charge", -2, 8],
      ["adjustment", 10, 10],
    ]);
    expect(page.items[0]).toMatchObject(ref1);
    expect(page.items[1]).toMatchObject(ref2);
    expect(page.items[0]!.balanceAfter).toBe(page.balance);
  });

  it("writes exactly k charges when N chats charge a balance of k at once", async () => {
    const { id } = await newAccount(4);
    const outcomes = await Promise.all(Array.from({ length: 11 }, () => ledger(id).charge(id, crypto.randomUUID(), 1, ref())));
    expect(outcomes.filter((o) => o === "charged")).toHaveLength(4);
    const page = await statementOf(id);
    expect(page.items.filter((i) => i.kind === "charge")).toHaveLength(4);
    expect(page.balance).toBe(0);
    expect(page.items.map((i) => i.balanceAfter)).toEqual([0, 1, 2, 3, 4]);
  });

  it("keeps each entry once through eviction between a charge, its retries and its refund", async () => {
    const { id } = await newAccount(5);
    const task = crypto.randomUUID();
    await ledger(id).charge(id, task, 1, ref());
    await evictDurableObject(ledger(id));
    await ledger(id).charge(id, task, 1, ref());
    await ledger(id).refund(id, task);
    await evictDurableObject(ledger(id));
    await ledger(id).refund(id, task);
    expect(kinds(await statementOf(id))).toEqual([
      ["refund", 1, 5],
      ["charge", -1, 4],
      ["adjustment", 5, 5],
    ]);
  });

  it("shows an operator's change as its signed difference, and no entry when the balance stays", async () => {
    const { id } = await newAccount(10);
    expect((await admin("PATCH", `/admin/accounts/${id}`, { credits: 4 })).status).toBe(200);
    expect((await admin("PATCH", `/admin/accounts/${id}`, { credits: 4 })).status).toBe(200);
    expect((await admin("PATCH", `/admin/accounts/${id}`, { credits: 9 })).status).toBe(200);
    expect(kinds(await statementOf(id))).toEqual([
      ["adjustment", 5, 9],
      ["adjustment", -6, 4],
      ["adjustment", 10, 10],
    ]);
  });

  it("begins an older ledger's statement with the balance it has when the statement starts", async () => {
    const { id } = await newAccount(10);
    // A ledger as the release before this one left it: its two tables, no statement, no schema version.
    await runInDurableObject(ledger(id), (_: AccountLedger, state) => {
      const sql = state.storage.sql;
      for (const table of ["statement", "meta", "charges"]) sql.exec(`DROP TABLE ${table}`);
      sql.exec("CREATE TABLE charges (task_id TEXT PRIMARY KEY, amount INTEGER NOT NULL, charged_at INTEGER NOT NULL, refunded_at INTEGER)");
      sql.exec("UPDATE ledger SET credits = 7");
    });
    await evictDurableObject(ledger(id));
    const task = crypto.randomUUID();
    expect(await ledger(id).charge(id, task, 1, ref())).toBe("charged");
    expect(kinds(await statementOf(id))).toEqual([
      ["charge", -1, 6],
      ["adjustment", 7, 7],
    ]);
  });

  it("keeps entries 90 days, and always the newest", async () => {
    const clock = frozenClock();
    const { id } = await newAccount(10);
    await ledger(id).charge(id, crypto.randomUUID(), 1, ref());
    clock.advance(91 * 86_400_000);
    // The next charge prunes what is past 90 days; it is then the newest, so it stays.
    await ledger(id).charge(id, crypto.randomUUID(), 1, ref());
    expect(kinds(await statementOf(id))).toEqual([["charge", -1, 8]]);
    clock.advance(400 * 86_400_000);
    await ledger(id).setBalance(id, 8);
    expect(kinds(await statementOf(id))).toEqual([["charge", -1, 8]]);
  });

  it("pages newest first", async () => {
    const { id } = await newAccount(10);
    for (let i = 0; i < 4; i++) await ledger(id).charge(id, crypto.randomUUID(), 1, ref());
    const first = await statementOf(id, 2);
    expect(kinds(first)).toEqual([
      ["charge", -1, 6],
      ["charge", -1, 7],
    ]);
    const second = await statementOf(id, 2, first.before!);
    expect(kinds(second)).toEqual([
      ["charge", -1, 8],
      ["charge", -1, 9],
    ]);
    const last = await statementOf(id, 2, second.before!);
    expect(kinds(last)).toEqual([["adjustment", 10, 10]]);
    expect(last.before).toBeNull();
  });
});

describe("GET /auth/credits", () => {
  it("answers the session's balance and statement, in pages joined by the cursor", async () => {
    const w = await world({ credits: 6 });
    for (let i = 0; i < 3; i++) await ledger(w.account.id).charge(w.account.id, crypto.randomUUID(), 1, ref());
    const all = await call("GET", "/auth/credits", { token: w.session });
    expect(all.status, all.text).toBe(200);
    expect(all.headers.get("cache-control")).toBe("no-store");
    expect(all.json.balance).toBe(3);
    expect(all.json.items.map((i: { kind: string }) => i.kind)).toEqual(["charge", "charge", "charge", "adjustment"]);
    expect(all.json.nextCursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call("GET", `/auth/credits?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { token: w.session });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.json.items.map((i: { id: string }) => i.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.json.items.map((i: { id: string }) => i.id));
  });

  it("is for the account session only, and each refusal says what this call needed", async ({ w }) => {
    const none = await call("GET", "/auth/credits");
    expectProblem(none, 401, "unauthorized");
    expect(none.json.detail).toBe("GET /auth/credits needs an account session: sign in with POST /auth/token and send its token as Authorization: Bearer pcs_….");
    const apiToken = await call("GET", "/auth/credits", { token: w.token });
    expectProblem(apiToken, 401, "unauthorized");
    expect(apiToken.json.detail).toBe("GET /auth/credits needs an account session (pcs_…, from POST /auth/token), not a personal API token: those are for /v1 and /mcp.");
    expect(apiToken.json.detail, "the call was about credits, not tokens").not.toMatch(/manage tokens/);
    const other = await call("GET", "/auth/credits", { token: "ses_not-a-session" });
    expectProblem(other, 401, "unauthorized");
    expect(other.json.detail).toBe("GET /auth/credits needs an account session (pcs_…, from POST /auth/token); this bearer is not one.");
  });

  it("refuses a bad limit, a forged cursor and another account's cursor with 400", async ({ w }) => {
    const other = await world();
    for (let i = 0; i < 2; i++) await ledger(other.account.id).charge(other.account.id, crypto.randomUUID(), 1, ref());
    const theirs = (await call("GET", "/auth/credits?limit=1", { token: other.session })).json.nextCursor as string;
    expect(theirs).toEqual(expect.any(String));
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=1.5",
      "limit=-1",
      "limit=x",
      "cursor=",
      "cursor=not-a-cursor",
      `cursor=${theirs}`,
      `cursor=${"A".repeat(300)}`,
      "other=1",
    ]) {
      expectProblem(await call("GET", `/auth/credits?${query}`, { token: w.session }), 400, "invalid_request");
    }
  });

  it("shows a new sign-up's opening balance to its own session", async () => {
    const account = await newAccount(3);
    const r = await call("GET", "/auth/credits", { token: await signIn(account) });
    expect(r.json).toMatchObject({ balance: 3, items: [{ kind: "adjustment", credits: 3, balanceAfter: 3 }], nextCursor: null });
  });
});
