import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { AccountLedger } from "../../src/credits/account-ledger";
import { frozenClock, settle } from "../clock";
import { call, chatsPath, creditsOf, expectProblem, historyOf, ledger, newChat, room, world, type World } from "../helpers";
import { acceptingAgent, agentCalls, fakeAgent, runningTask } from "./fake-agent";

const usageOf = async (w: World) => (await call("GET", `/v1/projects/${w.projectId}/usage`, { token: w.token })).json.items;
const submissionOf = async (w: World, chatId: string, id: string) => (await call("GET", `${chatsPath(w)}/${chatId}/submissions/${id}`, { token: w.token })).json;

describe("an http agent's usage", () => {
  it("shows the token counts the agent reports with its result, and adds them to the project's usage", async () => {
    const clock = frozenClock();
    fakeAgent(() => Response.json({ status: "success", content: "Done.", usage: { inputTokens: 1200, outputTokens: 340 } }));
    const w = await world();
    const c = await newChat(w);
    await runningTask(w, c.id, clock).catch(() => undefined);
    await settle(room(c.id), clock);
    const [reply] = (await historyOf(w, c.id)).items;
    expect(reply).toMatchObject({ role: "owner", status: "success", usage: { credits: 1, inputTokens: 1200, outputTokens: 340 } });
    expect(await usageOf(w)).toEqual([{ date: new Date(clock.now()).toISOString().slice(0, 10), tasks: 1, credits: 1, inputTokens: 1200, outputTokens: 340 }]);
  });

  it("takes usage with a later result too, and refuses usage that is not two non-negative integers", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const agent = agentCalls(c.id, reply.taskId!);
    for (const usage of [{ inputTokens: -1, outputTokens: 0 }, { inputTokens: 1.5, outputTokens: 0 }, { inputTokens: "1", outputTokens: 0 }, { inputTokens: 1 }, 7]) {
      expectProblem(await agent.result({ status: "success", content: "x", usage }), 400, "invalid_request");
    }
    expect((await agent.result({ status: "success", content: "Later.", usage: null })).status).toBe(204);
    expect((await historyOf(w, c.id)).items[0]!.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
  });

  it("returns a failed task's credits once, in the statement and the usage, also across a restart before the refund", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world({ credits: 5 });
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const refund = vi.spyOn(AccountLedger.prototype, "refund").mockRejectedValueOnce(new Error("Network connection lost."));
    expect((await agentCalls(c.id, reply.taskId!).result({ status: "failed", content: "", usage: { inputTokens: 10, outputTokens: 2 } })).status).toBe(204);
    // The refund failed: it is owed, and the chat's next object pays it.
    expect(await creditsOf(w.account.id)).toBe(4);
    await evictDurableObject(room(c.id));
    await settle(room(c.id), clock);
    expect(refund).toHaveBeenCalledTimes(2);
    expect(await creditsOf(w.account.id)).toBe(5);
    const items = (await historyOf(w, c.id)).items;
    expect(items[1]).toMatchObject({ role: "owner", status: "failed", usage: { credits: 0, inputTokens: 10, outputTokens: 2 } });
    expect(await submissionOf(w, c.id, reply.submissionId!)).toMatchObject({ status: "done", credits: { charged: 1, refunded: 1 }, failure: null });
    const mine = (await ledger(w.account.id).statementPage(w.account.id, 100))!.items.filter((i) => i.submissionId === reply.submissionId);
    expect(mine.map((i) => [i.kind, i.credits]).sort()).toEqual([
      ["charge", -1],
      ["refund", 1],
    ]);
    expect((await usageOf(w)).map((d: { tasks: number; credits: number }) => [d.tasks, d.credits])).toEqual([[1, 0]]);
  });

  it("says why an agent that could not be reached failed in sentences of their own, costing nothing", async () => {
    const clock = frozenClock();
    fakeAgent(() => {
      throw new TypeError("network down");
    });
    const w = await world({ credits: 2 });
    const c = await newChat(w);
    await call("POST", `${chatsPath(w)}/${c.id}/messages`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "hello" } });
    await settle(room(c.id), clock);
    const [error, reply] = (await historyOf(w, c.id)).items;
    expect(error!.content).toBe("The agent could not take the task: network down. Its credits were returned.");
    expect(reply).toMatchObject({ status: "failed", usage: { credits: 0, inputTokens: null, outputTokens: null } });
    expect(await creditsOf(w.account.id)).toBe(2);
  });
});
