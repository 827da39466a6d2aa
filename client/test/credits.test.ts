// Projects, credits, usage and the account's statement through the client, against the real Worker.
import { describe, expect, it } from "vitest";
import { AccountClient, ProblemError, type StatementItem } from "../src/index.ts";
import { admin, base, pass, proxy, world } from "./helpers.ts";

const today = () => new Date().toISOString().slice(0, 10);
const problem = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a ProblemError"),
    (error: unknown) => {
      expect(error).toBeInstanceOf(ProblemError);
      return error as ProblemError;
    },
  );

describe("projects and credits through the client", () => {
  it("lists the token's projects by name with its role, and shows each role what it may see of the credits", async () => {
    const [w, other] = await Promise.all([world(), world()]);
    const shared = await admin("POST", "/admin/projects", { name: "a shared project", ownerAccountId: other.accountId });
    await admin("PUT", `/admin/projects/${shared.id}/members/${w.accountId}`, { role: "viewer" });

    const listed = await w.client.projects.list().withResponse();
    expect(listed.data).toEqual([
      { id: shared.id, name: "a shared project", role: "viewer" },
      { id: w.projectId, name: "client tests", role: "owner" },
    ]);
    expect(listed.rateLimit).not.toBeNull();

    expect(await w.client.credits.get(w.projectId)).toEqual({ balance: 1000, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 0 } });
    // A viewer learns whether work can run, never the owner's balance.
    expect(await w.client.credits.get(shared.id)).toEqual({ balance: null, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 0 } });
    await admin("PATCH", `/admin/accounts/${other.accountId}`, { credits: 0 });
    expect(await w.client.credits.get(shared.id)).toEqual({ balance: null, taskCost: 1, canRun: false, credential: { creditLimit: null, creditsUsed: 0 } });

    expect(await problem(w.client.credits.get(crypto.randomUUID()))).toMatchObject({ status: 404, code: "not_found" });
    expect(await problem(w.client.usage.get(other.projectId))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("shows what a reply cost: its usage, the balance, the statement's charge and the project's day; a bad range is a typed 400", async () => {
    const w = await world();
    const chat = await w.client.chats.create(w.projectId, { title: "what it costs" });
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "how much was that" });
    // The built-in agent reports no model tokens.
    expect(reply.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
    expect(await w.client.credits.get(w.projectId)).toEqual({ balance: 999, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 1 } });
    const [charge] = (await w.session.credits.page({ limit: 1 })).items;
    expect(charge).toMatchObject({ kind: "charge", credits: -1, balanceAfter: 999, projectId: w.projectId, chatId: chat.id, submissionId: reply.submissionId });

    const day = [{ date: today(), tasks: 1, credits: 1, inputTokens: 0, outputTokens: 0 }];
    // The project counts a task within 5 seconds of its end.
    await expect.poll(() => w.client.usage.get(w.projectId), { timeout: 10_000, interval: 200 }).toEqual(day);
    expect(await w.client.usage.get(w.projectId, { from: today(), to: today() })).toEqual(day);
    expect(await w.client.usage.get(w.projectId, { from: "2024-01-01", to: "2024-12-31" })).toEqual([]);

    for (const [range, path] of [
      [{ from: today(), to: "2024-01-01" }, "from"],
      [{ to: "2026-02-30" }, "to"],
      [{ from: "2024-01-01", to: "2025-01-01" }, "to"],
    ] as const) {
      const refused = await problem(w.client.usage.get(w.projectId, range));
      expect(refused, JSON.stringify(range)).toMatchObject({ status: 400, code: "invalid_request" });
      expect(refused.errors.map((e) => e.path)).toEqual([path]);
    }
  });

  it("pages through the account's statement, newest first, and refuses a cursor it did not give and an API token", async () => {
    let reads = 0;
    const counting = await proxy(async (req, res, forward) => {
      if (req.url!.startsWith("/auth/credits")) reads++;
      await pass(res, forward);
    });
    const w = await world();
    // Three changes, and one that leaves the balance as it was (no entry).
    for (const credits of [900, 950, 700, 700]) await admin("PATCH", `/admin/accounts/${w.accountId}`, { credits });
    const account = new AccountClient({ baseUrl: counting.url, session: w.session.session });

    const entries: StatementItem[] = [];
    for await (const entry of account.credits.list({ limit: 3 })) entries.push(entry);
    expect(reads).toBe(2);
    expect(entries.map((e) => [e.kind, e.credits, e.balanceAfter])).toEqual([
      ["adjustment", -250, 700],
      ["adjustment", 50, 950],
      ["adjustment", -100, 900],
      ["adjustment", 1000, 1000],
    ]);
    expect(entries.every((e) => e.projectId === null && e.chatId === null && e.submissionId === null)).toBe(true);

    const first = await account.credits.page({ limit: 2 }).withResponse();
    expect(first.data.balance).toBe(700);
    expect(first.rateLimit).toBeNull();
    expect(first.response.headers.get("cache-control")).toBe("no-store");
    const cursor = first.data.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    const second = await account.credits.page({ limit: 2, cursor: cursor! });
    expect(second.nextCursor).toBeNull();
    expect([...first.data.items, ...second.items]).toEqual(entries);

    const other = await world();
    for (const refused of [() => other.session.credits.page({ cursor: cursor! }), () => account.credits.page({ cursor: "not-a-cursor" })]) {
      const error = await problem(refused());
      expect(error).toMatchObject({ status: 400, code: "invalid_request" });
      expect(error.errors.map((e) => e.path)).toEqual(["cursor"]);
    }
    expect((await problem(account.credits.page({ limit: 0 }))).errors.map((e) => e.path)).toEqual(["limit"]);
    // The statement is the account's, not an integration's: an API token is refused.
    expect(await problem(new AccountClient({ baseUrl: base(), session: w.token }).credits.page())).toMatchObject({ status: 401, code: "unauthorized" });
    await counting.close();
  });
});
