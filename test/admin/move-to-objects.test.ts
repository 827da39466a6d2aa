import { describe, expect, it } from "vitest";
import { ChatList } from "../../src/chats/schemas";
import { admin, call, chatsPath, env, expectProblem, ledger, newAccount, newToken, signIn } from "../helpers";

/** Pages through the move of one kind, as `npm run admin -- move-to-objects` does. */
async function moveAll(kind: "accounts" | "projects", limit: number) {
  const total = { moved: 0, alreadyMoved: 0, pages: 0 };
  let after: string | undefined;
  do {
    const r = await admin("POST", "/admin/move-to-objects", { kind, limit, ...(after ? { after } : {}) });
    expect(r.status, r.text).toBe(200);
    total.moved += r.json.moved;
    total.alreadyMoved += r.json.alreadyMoved;
    total.pages++;
    after = r.json.next ?? undefined;
  } while (after);
  return total;
}

/** Rows as they were before balances and chat lists moved: in D1 only, no object ever used. */
async function legacyAccount(credits: number) {
  const id = crypto.randomUUID();
  const email = `legacy-${id}@example.test`;
  await env.DB.prepare("INSERT INTO accounts (id, email, password_hash, credits, created_at) VALUES (?, ?, 'x', ?, ?)").bind(id, email, credits, new Date().toISOString()).run();
  return id;
}
async function legacyProject(ownerAccountId: string, chatTitles: string[]) {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.batch([
    env.DB.prepare("INSERT INTO projects (id, name, owner_account_id, status, created_at) VALUES (?, 'legacy', ?, 'active', ?)").bind(id, ownerAccountId, now),
    env.DB.prepare("INSERT INTO project_members (project_id, account_id, role) VALUES (?, ?, 'owner')").bind(id, ownerAccountId),
    ...chatTitles.map((title, i) =>
      env.DB.prepare(
        "INSERT INTO chat_index (id, project_id, title, created_at, updated_at, archived_at, last_message_at, latest_agent_preview, is_awaiting_user, is_working, queued_count, version) VALUES (?, ?, ?, ?, ?, NULL, NULL, '', 0, 0, 0, 3)",
      ).bind(crypto.randomUUID(), id, title, now, new Date(Date.parse(now) + i).toISOString()),
    ),
  ]);
  return id;
}

describe("POST /admin/move-to-objects", () => {
  it("moves every older account's balance into its ledger, page by page, once", async () => {
    const legacy = [await legacyAccount(11), await legacyAccount(22), await legacyAccount(33)];
    const fresh = await newAccount(44);
    const first = await moveAll("accounts", 2);
    expect(first.moved).toBeGreaterThanOrEqual(3);
    expect(first.pages).toBeGreaterThanOrEqual(2);
    for (const [i, id] of legacy.entries()) expect(await ledger(id).balance(id)).toBe((i + 1) * 11);
    expect(await ledger(fresh.id).balance(fresh.id)).toBe(44);
    // Run again (a retried deploy step): nothing moves twice, and a balance changed since is kept.
    await ledger(legacy[0]!).setBalance(legacy[0]!, 5);
    const again = await moveAll("accounts", 2);
    expect(again.moved).toBe(0);
    expect(again.alreadyMoved).toBe(first.moved + first.alreadyMoved);
    expect(await ledger(legacy[0]!).balance(legacy[0]!)).toBe(5);
  });

  it("moves every older project's chat list into its object, served by GET chats", async () => {
    const owner = await newAccount();
    const projectId = await legacyProject(owner.id, ["first", "second"]);
    expect((await moveAll("projects", 50)).moved).toBeGreaterThanOrEqual(1);
    const token = await newToken(await signIn(owner));
    const r = await call("GET", chatsPath({ projectId }), { token });
    expect(ChatList.parse(r.json).items.map((c) => c.title)).toEqual(["second", "first"]);
    expect((await moveAll("projects", 50)).moved).toBe(0);
  });

  it("refuses an unknown kind, a bad cursor and a page over 100, and callers without the admin token", async () => {
    expectProblem(await admin("POST", "/admin/move-to-objects", { kind: "tokens" }), 400, "invalid_request");
    expectProblem(await admin("POST", "/admin/move-to-objects", { kind: "accounts", after: "not-an-id" }), 400, "invalid_request");
    expectProblem(await admin("POST", "/admin/move-to-objects", { kind: "accounts", limit: 101 }), 400, "invalid_request");
    expectProblem(await call("POST", "/admin/move-to-objects", { body: { kind: "accounts" } }), 401);
  });
});
