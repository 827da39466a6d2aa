import { describe, expect, it, vi } from "vitest";
import { frozenClock, runNextAlarm, settle, type Clock } from "../clock";
import { chatOf, creditsOf, expectProblem, newChat, peek, queueOf, room, world, type World } from "../helpers";
import { cancel, steer, stop, stopped, submissionOf } from "../chats/control-helpers";
import { acceptingAgent, agentCalls, fakeAgent, runningTask } from "./fake-agent";
import { STEERING_PER_TASK } from "../../src/agent/limits";

/** A running task at the agent, and the agent's calls about it. */
async function taskAtAgent(w: World, chatId: string, clock: Clock) {
  const reply = await runningTask(w, chatId, clock);
  return { reply, agent: agentCalls(chatId, reply.taskId!) };
}

describe("stopping an http agent's task", () => {
  it("tells the agent at {AGENT_URL}/{taskId}/stop with the secret, and refuses the task's later output", async () => {
    const clock = frozenClock();
    const calls = acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { reply, agent } = await taskAtAgent(w, c.id, clock);
    expect(calls[0]!.body.steeringUrl).toBe(`https://api.example.test/agent/chats/${c.id}/tasks/${reply.taskId}/steering`);
    expect((await agent.partial({ seq: 1, text: "Half of it" })).status).toBe(204);

    const r = await stop(w, c.id, reply.id);
    expect(stopped(r)).toMatchObject({ status: "interrupted_by_user", content: "Half of it" });
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    expect(calls[1]).toEqual({
      url: `https://agent.test/tasks/${reply.taskId}/stop`,
      authorization: "Bearer agent-test-secret",
      body: { taskId: reply.taskId, chatId: c.id, projectId: w.projectId, reason: "stopped_by_user" },
    });

    for (const late of [await agent.partial({ seq: 2, text: " and more" }), await agent.result({ status: "success", content: "All of it" }), await agent.steering()]) {
      expectProblem(late, 409, "conflict");
      expect(late.json.detail).toMatch(/stopped/);
    }
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)).toEqual(stopped(r));
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await chatOf(w, c.id)).isWorking).toBe(false);
  });

  it("stops the task whatever the agent answers to being told, or when it cannot be reached", async () => {
    for (const answer of [() => new Response("no", { status: 500 }), () => Promise.reject(new Error("connection refused"))]) {
      // Each round freezes the clock anew: the last round's restoreAllMocks gave Date.now back.
      const clock = frozenClock();
      fakeAgent((call) => (call.url.endsWith("/stop") ? answer() : new Response(null, { status: 202 })));
      const w = await world();
      const c = await newChat(w);
      const { reply } = await taskAtAgent(w, c.id, clock);
      expect(stopped(await stop(w, c.id, reply.id)).status).toBe("interrupted_by_user");
      await settle(room(c.id), clock);
      expect((await chatOf(w, c.id)).isWorking).toBe(false);
      vi.restoreAllMocks();
    }
  });

  it("has one final state when the stop and the agent's result arrive together", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { reply, agent } = await taskAtAgent(w, c.id, clock);
    const [stopAnswer, resultAnswer] = await Promise.all([stop(w, c.id, reply.id), agent.result({ status: "success", content: "Finished" })]);
    const stored = (await peek(w, c.id)).find((m) => m.id === reply.id)!;
    expect(stopped(stopAnswer)).toEqual(stored);
    if (stored.status === "success") {
      expect(resultAnswer.status).toBe(204);
      expect(stored.content).toBe("Finished");
    } else {
      expect(stored.status).toBe("interrupted_by_user");
      expectProblem(resultAnswer, 409, "conflict");
    }
  });

  it("answers a late result for a task that ended otherwise with 204, as before", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { agent } = await taskAtAgent(w, c.id, clock);
    expect((await agent.result({ status: "success", content: "Done" })).status).toBe(204);
    expect((await agent.result({ status: "success", content: "Done again" })).status).toBe(204);
    expectProblem(await agent.steering(), 409, "conflict");
  });
});

describe("steering an http agent's task", () => {
  it("offers the waiting texts in order; acknowledged ones become user messages of the task, at least once", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { reply, agent } = await taskAtAgent(w, c.id, clock);
    expect((await agent.steering()).json).toEqual({ items: [] });
    const first = (await steer(w, c.id, "blue")).json.submissionId as string;
    const second = (await steer(w, c.id, "and bigger")).json.submissionId as string;
    const offered = await agent.steering();
    expect(offered.status).toBe(200);
    expect(offered.json.items).toEqual([
      { id: first, content: "blue", replyToMessageId: null, createdAt: expect.any(String) },
      { id: second, content: "and bigger", replyToMessageId: null, createdAt: expect.any(String) },
    ]);
    expectProblem(await agent.ack({ ids: [second] }), 409, "conflict"); // out of order
    expect((await agent.ack({ ids: [first] })).status).toBe(204);
    expect((await agent.ack({ ids: [first] })).status, "a repeated acknowledgement").toBe(204);
    expect((await agent.steering()).json.items.map((i: { id: string }) => i.id)).toEqual([second]);
    expect((await agent.ack({ ids: [first, second] })).status).toBe(204);
    expect((await agent.steering()).json).toEqual({ items: [] });

    const users = (await peek(w, c.id)).filter((m) => m.role === "user").reverse();
    expect(users.map((m) => [m.content, m.taskId, m.submissionId])).toEqual([
      ["work on this", reply.taskId, expect.any(String)],
      ["blue", reply.taskId, first],
      ["and bigger", reply.taskId, second],
    ]);
    expect((await queueOf(w, c.id)).items).toEqual([]);
    expect((await agent.result({ status: "success", content: "Blue and bigger." })).status).toBe(204);
    // After the end, acknowledging what the task took is still fine.
    expect((await agent.ack({ ids: [first, second] })).status).toBe(204);
    expect((await submissionOf(w, c.id, second)).state).toMatchObject({ status: "done", taskId: reply.taskId, replyMessageId: reply.id });
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it(`offers at most ${STEERING_PER_TASK} a task; a cancelled text cannot be acknowledged; what is left runs as its own tasks`, async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { agent } = await taskAtAgent(w, c.id, clock);
    const ids: string[] = [];
    for (let i = 0; i < STEERING_PER_TASK + 1; i++) ids.push((await steer(w, c.id, `s${i}`)).json.submissionId);
    expect((await agent.steering()).json.items.map((i: { id: string }) => i.id)).toEqual(ids.slice(0, STEERING_PER_TASK));
    expect((await cancel(w, c.id, ids[0]!)).status).toBe(204);
    expectProblem(await agent.ack({ ids: [ids[0]] }), 409, "conflict");
    expect((await agent.ack({ ids: ids.slice(1, 3) })).status).toBe(204);
    expect((await agent.result({ status: "success", content: "ok" })).status).toBe(204);
    expectProblem(await agent.ack({ ids: [ids[3]] }), 409, "conflict"); // the task ended before taking it
    expect((await queueOf(w, c.id)).items.map((e) => [e.id, e.status])).toEqual(ids.slice(3).map((id) => [id, "queued"]));
    await runNextAlarm(room(c.id), clock);
    expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "working", submissionId: ids[3] });
  });

  it("takes the texts before a refused one, and a repeated id once", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { agent } = await taskAtAgent(w, c.id, clock);
    const [a, b, d] = [(await steer(w, c.id, "a")).json.submissionId, (await steer(w, c.id, "b")).json.submissionId, (await steer(w, c.id, "d")).json.submissionId];
    expect((await agent.steering()).json.items.map((i: { id: string }) => i.id)).toEqual([a, b, d]);
    expect((await cancel(w, c.id, b)).status).toBe(204);
    const refused = await agent.ack({ ids: [a, b] });
    expectProblem(refused, 409, "conflict");
    expect(refused.json.detail).toContain(b);
    expect(
      (await agent.steering()).json.items.map((i: { id: string }) => i.id),
      "a was taken, b is gone",
    ).toEqual([d]);
    expect((await agent.ack({ ids: [a, d, d] })).status).toBe(204);
    const users = (await peek(w, c.id)).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["d", "a", "work on this"]);
  });

  it("refuses a malformed acknowledgement, a wrong secret and an unknown task", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const { reply, agent } = await taskAtAgent(w, c.id, clock);
    for (const body of [{}, { ids: [] }, { ids: ["nope"] }, { ids: Array(6).fill(crypto.randomUUID()) }]) {
      expectProblem(await agent.ack(body), 400, "invalid_request");
    }
    const wrong = agentCalls(c.id, reply.taskId!, "not-the-secret");
    expectProblem(await wrong.steering(), 401, "unauthorized");
    expectProblem(await wrong.ack({ ids: [crypto.randomUUID()] }), 401, "unauthorized");
    for (const unknown of [agentCalls(c.id, crypto.randomUUID()), agentCalls(crypto.randomUUID(), reply.taskId!)]) {
      expectProblem(await unknown.steering(), 404, "not_found");
      expectProblem(await unknown.ack({ ids: [crypto.randomUUID()] }), 404, "not_found");
      expectProblem(await unknown.result({ status: "success", content: "x" }), 404, "not_found");
      expectProblem(await unknown.partial({ seq: 1, text: "x" }), 404, "not_found");
    }
  });
});
