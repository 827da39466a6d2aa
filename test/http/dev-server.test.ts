import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { describeAgent } from "../../src/agent/select";
import { createApp } from "../../src/app";
import { config } from "../../src/config";
import type { Env } from "../../src/env";
import { answerOf, call, env, expectProblem } from "../helpers";

/** The Worker as the project's scripts start it under wrangler dev: with a DEV_SERVER_ID of its own. */
async function devServerCall(method: string, vars: Partial<Env>) {
  const ctx = createExecutionContext();
  const response = await createApp().fetch(new Request("http://127.0.0.1:8787/dev/server", { method }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return answerOf(response);
}

const described = (vars: Partial<Env>, ai?: Ai) => describeAgent(config({ ...vars } as Env), { ai });

describe("GET /dev/server", () => {
  it("does not exist without DEV_SERVER_ID, whatever the method: a 404, never a 405 that would tell it exists", async () => {
    for (const method of ["GET", "POST", "DELETE"]) expectProblem(await call(method, "/dev/server"), 404, "not_found");
  });

  it("answers the DEV_SERVER_ID the Worker was started with, without credentials, and names the agent", async () => {
    const r = await devServerCall("GET", { DEV_SERVER_ID: "run-7f3a", LOCAL_AGENT_DELAY_MS: "1500" });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.json).toEqual({ id: "run-7f3a", agent: "local (the built-in stand-in agent, 1500 ms a task)" });
    expectProblem(await devServerCall("POST", { DEV_SERVER_ID: "run-7f3a" }), 405, "method_not_allowed");
  });
});

describe("the agent as npm run dev names it", () => {
  it("names a model, its base URL and whether a key is set, never the key or credentials in the URL", () => {
    const line = described({
      AGENT_MODE: "openai",
      AGENT_BASE_URL: "https://user:hunter2@models.example/v1?key=sk-in-query#x",
      AGENT_MODEL: "gpt-4o-mini",
      AGENT_API_KEY: "sk-secret-key",
    });
    expect(line).toBe("openai (model gpt-4o-mini at https://models.example/v1, with AGENT_API_KEY)");
    expect(described({ AGENT_MODE: "openai", AGENT_BASE_URL: "http://127.0.0.1:11434/v1", AGENT_MODEL: "llama3.2" })).toBe(
      "openai (model llama3.2 at http://127.0.0.1:11434/v1, without AGENT_API_KEY)",
    );
    expect(described({ AGENT_MODE: "workers-ai", AGENT_MODEL: "@cf/meta/llama-3.1-8b-instruct" }, {} as Ai)).toBe(
      "workers-ai (model @cf/meta/llama-3.1-8b-instruct, through the AI binding)",
    );
  });

  it("says what is missing, and that every task will fail, when the mode cannot run", () => {
    expect(described({ AGENT_MODE: "openai", AGENT_MODEL: "m" })).toBe(
      "openai (model m at an unset URL, without AGENT_API_KEY): AGENT_MODE is openai but AGENT_BASE_URL is not set, so every task fails",
    );
    expect(described({ AGENT_MODE: "workers-ai", AGENT_MODEL: "m" })).toContain("the AI binding is not set, so every task fails");
    expect(described({ AGENT_MODE: "http", AGENT_URL: "https://agent.example/tasks", AGENT_SECRET: "shared-secret" })).toBe(
      "http (tasks go to https://agent.example/tasks): AGENT_MODE is http but PUBLIC_URL is not set, so every task fails",
    );
    expect(described({ AGENT_MODE: "claude" })).toBe('"claude": AGENT_MODE "claude" is not one of local, http, openai, workers-ai, so every task fails');
  });
});
