import { describe, expect, it } from "vitest";
import { taskCallbackUrl } from "../../src/agent/callback-url";
import { config } from "../../src/config";
import { httpAgent } from "../../src/agent/http";
import { LOCAL_REPLY_PARTS, localAgent, localReply, replyParts } from "../../src/agent/local";
import { agentFor } from "../../src/agent/select";
import type { Env } from "../../src/env";
import type { AgentTask } from "../../src/agent/port";

const task: AgentTask = {
  taskId: crypto.randomUUID(),
  chatId: crypto.randomUUID(),
  projectId: crypto.randomUUID(),
  content: "Make it blue",
  replyToMessageId: null,
  callbackUrl: "https://s.test/cb",
  steeringUrl: "https://s.test/steering",
  answer: null,
};
/** A step of a running task, with steering texts taken so far (none unless given). */
const step = (startedAt: number, now: number, written: number, steering: string[] = []) => ({ startedAt, now, written, takeSteering: () => steering });

describe("local agent", () => {
  it("works for the delay, then replies deterministically from the content", async () => {
    const agent = localAgent(1000, "http://app.test");
    expect(await agent.start(task, 5000)).toEqual({ kind: "pending", checkAt: 5250 });
    expect(agent.check(task, step(5000, 6000, 0))).toEqual({ status: "success", content: localReply(task) });
    expect(localReply(task)).toBe(localReply({ content: "Make it blue" }));
    expect(localReply({ content: "x".repeat(500) }).length).toBeLessThan(250);
  });

  it("writes its reply in parts over its working time, each part once", () => {
    const agent = localAgent(1000, "http://app.test");
    const parts = replyParts(localReply(task));
    expect(parts).toHaveLength(LOCAL_REPLY_PARTS);
    expect(parts.join("")).toBe(localReply(task));
    expect(parts.every((p) => p.length > 0)).toBe(true);
    expect(agent.check(task, step(5000, 5100, 0))).toEqual({ checkAt: 5250, append: undefined });
    expect(agent.check(task, step(5000, 5250, 0))).toEqual({ checkAt: 5500, append: parts[0] });
    // Late alarms catch up in one append; what was written already is not written again.
    expect(agent.check(task, step(5000, 5800, parts[0]!.length))).toEqual({ checkAt: 6000, append: parts[1]! + parts[2]! });
    expect(agent.check(task, step(5000, 5999, (parts[0]! + parts[1]! + parts[2]!).length))).toEqual({ checkAt: 6000, append: undefined });
  });
});

describe("http agent", () => {
  it("gives up on an agent that does not answer the start request in time", async () => {
    const hanging: typeof fetch = (_input, init) => new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000, startTimeoutMs: 50, fetch: hanging });
    await expect(agent.start(task, 0)).rejects.toThrow("the agent did not answer in time.");
  });

  it("fails a pending task once the result deadline passes", () => {
    const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000 });
    expect(agent.check(task, step(0, 999, 0))).toEqual({ checkAt: 1000 });
    expect(agent.check(task, step(0, 1000, 0))).toEqual({ status: "failed", error: "The agent did not send a result within 1 s." });
  });

  it("rejects answers that are not a result", async () => {
    const answers: [Response, string][] = [
      [new Response("not json", { status: 200 }), "the agent answered with a body that is not a result."],
      [Response.json({ status: "done" }), "the agent answered with a body that is not a result."],
      [new Response("boom", { status: 500 }), "the agent answered HTTP 500."],
    ];
    for (const [response, message] of answers) {
      const agent = httpAgent({ url: "https://agent.test", secret: "s", resultTimeoutMs: 1000, fetch: async () => response });
      await expect(agent.start(task, 0)).rejects.toThrow(message);
    }
  });
});

describe("agent configuration", () => {
  const httpEnv = (vars: Partial<Env>) => config({ AGENT_MODE: "http", AGENT_URL: "https://agent.test", AGENT_SECRET: "s", ...vars } as Env);

  it("builds callback URLs from PUBLIC_URL alone", () => {
    expect(taskCallbackUrl(httpEnv({ PUBLIC_URL: "https://api.example.com/" }).publicOrigin, "c", "t", "result")).toBe("https://api.example.com/agent/chats/c/tasks/t/result");
    for (const PUBLIC_URL of [undefined, "", "not a url", "ftp://api.example.com"]) {
      const { publicOrigin } = httpEnv({ PUBLIC_URL });
      expect(publicOrigin, String(PUBLIC_URL)).toBeUndefined();
      expect(taskCallbackUrl(publicOrigin, "c", "t", "steering")).toBeNull();
    }
  });

  it("fails every http agent task with the reason when PUBLIC_URL is not set", async () => {
    await expect(agentFor(httpEnv({})).start(task, 0)).rejects.toThrow("AGENT_MODE is http but PUBLIC_URL is not set");
    await expect(agentFor(httpEnv({ AGENT_URL: "", PUBLIC_URL: "nope" })).start(task, 0)).rejects.toThrow("AGENT_URL, PUBLIC_URL are not set");
    const configured = agentFor(httpEnv({ PUBLIC_URL: "https://api.example.com" }));
    expect(configured.check(task, step(0, 1, 0))).toEqual({ checkAt: 600_000 });
  });
});
