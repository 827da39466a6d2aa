import { describe, expect, vi } from "vitest";
import { ProjectChats } from "../../src/chats/list/project-chats";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, creditsOf, env, historyOf, ledger, newChat, room, send, world, type World } from "../helpers";
import { openEvents } from "../sse";
import { it } from "../fixtures/chat";

const submissionOf = async (w: World, chatId: string, id: string) => (await call("GET", `${chatsPath(w)}/${chatId}/submissions/${id}`, { token: w.token })).json;
const usageOf = async (w: World) => (await call("GET", `/v1/projects/${w.projectId}/usage`, { token: w.token })).json.items as { tasks: number; credits: number }[];
const statementOf = async (w: World) => (await ledger(w.account.id).statementPage(w.account.id, 100))!.items;
const total = (items: { tasks: number; credits: number }[]) =>
  items.reduce((sum, d) => ({ tasks: sum.tasks + d.tasks, credits: sum.credits + d.credits }), { tasks: 0, credits: 0 });

describe("what a task cost", () => {
  it("shows an ended reply's usage in the history and on the stream; user messages and working replies show none", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 10 });
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    const sent = await send(w, c.id, "what does it cost?");
    await runNextAlarm(room(c.id), clock);
    const working = await s.until((e) => e.type === "message" && e.data.role === "owner" && e.data.status === "working");
    expect(working.data.usage).toBeNull();
    await settle(room(c.id), clock);
    const done = await s.until((e) => e.type === "message" && e.data.role === "owner" && e.data.status === "success");
    expect(done.data.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
    await s.close();
    const items = (await historyOf(w, c.id)).items;
    expect(items.map((m) => [m.role, m.usage])).toEqual([
      ["owner", { credits: 1, inputTokens: null, outputTokens: null }],
      ["user", null],
    ]);
    expect(await submissionOf(w, c.id, sent.json.submissionId)).toMatchObject({ status: "done", credits: { charged: 1, refunded: 0 }, failure: null });
    expect(await creditsOf(w.account.id)).toBe(9);
    const [charge] = await statementOf(w);
    expect(charge).toMatchObject({ kind: "charge", credits: -1, balanceAfter: 9, projectId: w.projectId, chatId: c.id, submissionId: sent.json.submissionId });
  });

  it("says why a submission never ran when the owner has no credits, and charges nothing", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const sent = await send(w, c.id, "I cannot pay");
    await settle(room(c.id), clock);
    const error = (await historyOf(w, c.id)).items.find((m) => m.role === "error")!;
    expect(error.usage).toBeNull();
    expect(await submissionOf(w, c.id, sent.json.submissionId)).toMatchObject({
      status: "failed",
      credits: { charged: 0, refunded: 0 },
      failure: { code: "insufficient_credits", message: error.content },
    });
    expect(total(await usageOf(w))).toEqual({ tasks: 0, credits: 0 });
  });

  it("keeps a stopped task's charge and takes nothing for a steering text", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 10 });
    const c = await newChat(w);
    await send(w, c.id, "long work");
    await runNextAlarm(room(c.id), clock);
    const reply = (await historyOf(w, c.id)).items[0]!;
    const steer = await call("POST", `${chatsPath(w)}/${c.id}/steer`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "and blue" } });
    expect(steer.status).toBe(202);
    await runNextAlarm(room(c.id), clock);
    const stopped = await call("POST", `${chatsPath(w)}/${c.id}/messages/${reply.id}/stop`, { token: w.token });
    expect(stopped.json).toMatchObject({ status: "interrupted_by_user", usage: { credits: 1, inputTokens: null, outputTokens: null } });
    expect((await submissionOf(w, c.id, steer.json.submissionId)).credits).toEqual({ charged: 0, refunded: 0 });
    await settle(room(c.id), clock);
    expect(await creditsOf(w.account.id)).toBe(9);
    expect(total(await usageOf(w))).toEqual({ tasks: 1, credits: 1 });
  });

  it("charges exactly k of N chats sent at once against a balance of k, and counts k tasks", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 3 });
    const chats = await Promise.all(Array.from({ length: 7 }, () => newChat(w)));
    const sent = await Promise.all(chats.map((c) => send(w, c.id, "go")));
    await Promise.all(chats.map((c) => runNextAlarm(room(c.id), clock)));
    for (const c of chats) await settle(room(c.id), clock);
    const states = await Promise.all(chats.map((c, i) => submissionOf(w, c.id, sent[i]!.json.submissionId)));
    expect(states.filter((s) => s.status === "done" && s.credits.charged === 1)).toHaveLength(3);
    const failed = states.filter((s) => s.status === "failed");
    expect(failed).toHaveLength(4);
    for (const s of failed) expect(s.failure.code).toBe("insufficient_credits");
    expect(await creditsOf(w.account.id)).toBe(0);
    expect((await statementOf(w)).filter((i) => i.kind === "charge")).toHaveLength(3);
    expect(total(await usageOf(w))).toEqual({ tasks: 3, credits: 3 });
  });

  it("counts a task once when its hand-off to the project is retried", async ({ clock, w, chat }) => {
    const upsert = vi.spyOn(ProjectChats.prototype, "upsert");
    await send(w, chat.id, "count me once");
    await settle(room(chat.id), clock);
    expect(total(await usageOf(w))).toEqual({ tasks: 1, credits: 1 });
    // The same usage handed over again (a retry whose first answer was lost) counts nothing more.
    const withUsage = upsert.mock.calls.find((args) => (args[3] ?? []).length > 0)!;
    await env.PROJECT_CHATS.getByName(w.projectId).upsert(...withUsage);
    expect(total(await usageOf(w))).toEqual({ tasks: 1, credits: 1 });
  });

  it("keeps usage to hand over when the project's list cannot be reached, and counts it once it can", async ({ clock, w, chat }) => {
    vi.spyOn(ProjectChats.prototype, "upsert").mockRejectedValueOnce(new Error("Network connection lost.")).mockRejectedValueOnce(new Error("Network connection lost."));
    await send(w, chat.id, "count me later");
    await settle(room(chat.id), clock);
    expect(total(await usageOf(w))).toEqual({ tasks: 1, credits: 1 });
  });
});
