import { describe, expect, it } from "vitest";
import { httpAgent } from "../../src/agent/http";
import { localAgent, localReply } from "../../src/agent/local";
import type { AgentTask } from "../../src/agent/port";

const task: AgentTask = { taskId: crypto.randomUUID(), chatId: crypto.randomUUID(), projectId: crypto.randomUUID(), content: "Make it blue", replyToMessageId: null, callbackUrl: "https://s.test/cb" };

describe("local agent", () => {
  it("works for the delay, then replies deterministically from the content", async () => {
    const agent = localAgent(1000);
    expect(await agent.start(task, 5000)).toEqual({ kind: "pending", checkAt: 6000 });
    expect(agent.check(task, 5000, 5999)).toEqual({ checkAt: 6000 });
    expect(agent.check(task, 5000, 6000)).toEqual({ status: "success", content: localReply(task) });
    expect(localReply(task)).toBe(localReply({ content: "Make it blue" }));
    expect(localReply({ content: "x".repeat(500) }).length).toBeLessThan(250);
  });
});

describe("http agent", () => {
  it("gives up on an agent that does not answer the start request in time", async () => {
    const hanging: typeof fetch = (_input, init) => new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000, startTimeoutMs: 50, fetch: hanging });
    await expect(agent.start(task, 0)).rejects.toThrow();
  });

  it("fails a pending task once the result deadline passes", () => {
    const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000 });
    expect(agent.check(task, 0, 999)).toEqual({ checkAt: 1000 });
    expect(agent.check(task, 0, 1000)).toMatchObject({ status: "failed" });
  });

  it("rejects answers that are not a result", async () => {
    for (const response of [new Response("not json", { status: 200 }), Response.json({ status: "done" }), new Response("boom", { status: 500 })]) {
      const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000, fetch: async () => response });
      await expect(agent.start(task, 0)).rejects.toThrow();
    }
  });
});
