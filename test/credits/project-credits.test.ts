import { describe, expect } from "vitest";
import { admin, call, env, expectProblem, ledger, newAccount, newToken, signIn, world } from "../helpers";
import { it } from "../fixtures/chat";

const creditsPath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/credits`;
const usagePath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/usage`;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

async function member(w: { projectId: string }, role: "editor" | "viewer", scopes?: string[]) {
  const account = await newAccount(77);
  expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${account.id}`, { role })).status).toBe(200);
  return newToken(await signIn(account), scopes);
}

/** Hands tasks' usage to the project as a chat's list sync does. */
async function recordUsage(projectId: string, tasks: { taskId?: string; endedAt?: number; credits: number; inputTokens: number | null; outputTokens: number | null }[]) {
  const chats = env.PROJECT_CHATS.getByName(projectId);
  const chat = {
    id: crypto.randomUUID(),
    title: "t",
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    archivedAt: null,
    lastMessageAt: null,
    latestAgentPreview: "",
    isAwaitingUser: false,
    pendingQuestionId: null,
    isWorking: false,
    queuedCount: 0,
    forkedFrom: null,
  };
  const usage = tasks.map((t) => ({
    taskId: t.taskId ?? crypto.randomUUID(),
    endedAt: t.endedAt ?? Date.now(),
    credits: t.credits,
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
  }));
  await chats.upsert(projectId, chat, 1, usage);
  return usage;
}

describe("GET /v1/projects/{projectId}/credits", () => {
  it("shows the owner the paying balance, the task's cost and whether a task can run", async () => {
    const w = await world({ credits: 37 });
    const r = await call("GET", creditsPath(w), { token: w.token });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ balance: 37, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 0 } });
    expect(r.headers.get("ratelimit")).toContain("per-token");
  });

  it("shows other members whether a task can run, not the owner's balance", async () => {
    const w = await world({ credits: 2 });
    for (const role of ["editor", "viewer"] as const) {
      const r = await call("GET", creditsPath(w), { token: await member(w, role, ["chat:read"]) });
      expect(r.json).toEqual({ balance: null, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 0 } });
    }
    await ledger(w.account.id).setBalance(w.account.id, 0);
    const r = await call("GET", creditsPath(w), { token: await member(w, "viewer") });
    expect(r.json).toEqual({ balance: null, taskCost: 1, canRun: false, credential: { creditLimit: null, creditsUsed: 0 } });
    expect((await call("GET", creditsPath(w), { token: w.token })).json).toEqual({ balance: 0, taskCost: 1, canRun: false, credential: { creditLimit: null, creditsUsed: 0 } });
  });

  it("answers 401, 403 and 404 as the other chat reads do", async ({ w }) => {
    const stranger = await world();
    expectProblem(await call("GET", creditsPath(w)), 401, "unauthorized");
    expectProblem(await call("GET", creditsPath(w), { token: w.session }), 401, "unauthorized");
    expectProblem(await call("GET", creditsPath(w), { token: await newToken(w.session, ["chat:write"]) }), 403, "insufficient_scope");
    expectProblem(await call("GET", creditsPath(w), { token: stranger.token }), 404, "not_found");
    expectProblem(await call("GET", creditsPath({ projectId: "not-a-uuid" }), { token: w.token }), 404, "not_found");
    expectProblem(await call("GET", creditsPath({ projectId: crypto.randomUUID() }), { token: w.token }), 404, "not_found");
  });

  it("answers 429 once the token's minute is spent", async ({ w }) => {
    let last = await call("GET", creditsPath(w), { token: w.token });
    for (let i = 0; i < 70 && last.status !== 429; i++) last = await call("GET", creditsPath(w), { token: w.token });
    expectProblem(last, 429, "rate_limited");
    expect(last.headers.get("retry-after")).toMatch(/^[0-9]+$/);
  });
});

describe("GET /v1/projects/{projectId}/usage", () => {
  it("adds up each day's ended tasks, counting a task once however often it is handed over", async ({ w }) => {
    const yesterday = Date.now() - 86_400_000;
    const tasks = await recordUsage(w.projectId, [
      { credits: 1, inputTokens: 100, outputTokens: 10 },
      { credits: 0, inputTokens: null, outputTokens: null },
      { endedAt: yesterday, credits: 1, inputTokens: 5, outputTokens: 6 },
    ]);
    // A retried hand-off, and the same tasks again in another chat's sync.
    await recordUsage(w.projectId, tasks);
    await recordUsage(w.projectId, tasks.slice(0, 1));
    const r = await call("GET", usagePath(w), { token: w.token });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      items: [
        { date: daysAgo(1), tasks: 1, credits: 1, inputTokens: 5, outputTokens: 6 },
        { date: today(), tasks: 2, credits: 1, inputTokens: 100, outputTokens: 10 },
      ],
    });
    const one = await call("GET", `${usagePath(w)}?from=${today()}&to=${today()}`, { token: w.token });
    expect(one.json.items).toHaveLength(1);
    const before = await call("GET", `${usagePath(w)}?to=${daysAgo(2)}`, { token: w.token });
    expect(before.json).toEqual({ items: [] });
  });

  it("defaults to the 30 days ending today", async ({ w }) => {
    await recordUsage(w.projectId, [
      { endedAt: Date.now() - 29 * 86_400_000, credits: 1, inputTokens: null, outputTokens: null },
      { endedAt: Date.now() - 30 * 86_400_000, credits: 1, inputTokens: null, outputTokens: null },
    ]);
    const r = await call("GET", usagePath(w), { token: w.token });
    expect(r.json.items.map((i: { date: string }) => i.date)).toEqual([daysAgo(29)]);
    const wider = await call("GET", `${usagePath(w)}?from=${daysAgo(30)}`, { token: w.token });
    expect(wider.json.items.map((i: { date: string }) => i.date)).toEqual([daysAgo(30), daysAgo(29)]);
  });

  it("is for any member with chat:read", async ({ w }) => {
    await recordUsage(w.projectId, [{ credits: 1, inputTokens: 1, outputTokens: 1 }]);
    const r = await call("GET", usagePath(w), { token: await member(w, "viewer", ["chat:read"]) });
    expect(r.json.items[0].tasks).toBe(1);
    expectProblem(await call("GET", usagePath(w)), 401, "unauthorized");
    expectProblem(await call("GET", usagePath(w), { token: await newToken(w.session, ["chat:write"]) }), 403, "insufficient_scope");
    expectProblem(await call("GET", usagePath(w), { token: (await world()).token }), 404, "not_found");
  });

  it("refuses every malformed or impossible range with 400", async ({ w }) => {
    const bad = [
      "from=yesterday",
      "from=2026-02-30&to=2026-03-01",
      "to=2026-13-01",
      "from=2026-1-01",
      "from=20260101",
      "from=2026-01-01T00:00:00Z",
      "from=2026-02-10&to=2026-02-01",
      "from=2025-01-01&to=2026-01-02",
      `from=${daysAgo(-1)}`,
      "from=",
      "other=1",
    ];
    for (const query of bad) expectProblem(await call("GET", `${usagePath(w)}?${query}`, { token: w.token }), 400, "invalid_request");
    expect((await call("GET", `${usagePath(w)}?from=2025-01-01&to=2026-01-01`, { token: w.token })).status).toBe(200);
    expect((await call("GET", `${usagePath(w)}?from=2024-02-29&to=2024-02-29`, { token: w.token })).status).toBe(200);
  });
});
