import { describe, expect, it } from "vitest";
import { config } from "../src/config";
import type { Env } from "../src/env";

const parse = (vars: Partial<Env>) => config({ ...vars } as Env);

describe("configuration", () => {
  it("gives every var its documented default", () => {
    expect(parse({})).toEqual({
      adminToken: undefined,
      appOrigin: "http://localhost:5173",
      appOrigins: ["http://localhost:5173"],
      publicOrigin: undefined,
      rateLimitPerMinute: 60,
      agent: { mode: "local", delayMs: 1500, timeoutMs: 600_000 },
      taskCreditCost: 1,
      catalogCacheSeconds: 30,
      questionTtlMs: 168 * 3_600_000,
      devServerId: undefined,
    });
  });

  it("parses what is set, and falls back to the default for what is not a valid value", () => {
    const set = parse({
      ADMIN_TOKEN: "t",
      APP_ORIGIN: "https://app.example/",
      APP_ORIGINS: "https://a.example, https://b.example/",
      PUBLIC_URL: "https://api.example/x",
      RATE_LIMIT_PER_MINUTE: "120",
      AGENT_MODE: "http",
      AGENT_URL: "https://agent.example",
      AGENT_SECRET: "s",
      AGENT_TIMEOUT_SECONDS: "30",
      TASK_CREDIT_COST: "2.7",
      CATALOG_CACHE_SECONDS: "0",
      QUESTION_TTL_HOURS: "0.5",
      DEV_SERVER_ID: "run-1",
    });
    expect(set).toEqual({
      adminToken: "t",
      appOrigin: "https://app.example",
      appOrigins: ["https://a.example", "https://b.example"],
      publicOrigin: "https://api.example",
      rateLimitPerMinute: 120,
      agent: { mode: "http", url: "https://agent.example", secret: "s", timeoutMs: 30_000 },
      taskCreditCost: 2,
      catalogCacheSeconds: 0,
      questionTtlMs: 1_800_000,
      devServerId: "run-1",
    });
    const bad = parse({
      ADMIN_TOKEN: "",
      APP_ORIGIN: "not a url",
      PUBLIC_URL: "ftp://x.example",
      RATE_LIMIT_PER_MINUTE: "-5",
      LOCAL_AGENT_DELAY_MS: "soon",
      CATALOG_CACHE_SECONDS: " ",
    });
    expect(bad).toMatchObject({
      adminToken: undefined,
      appOrigin: "http://localhost:5173",
      publicOrigin: undefined,
      rateLimitPerMinute: 60,
      agent: { delayMs: 1500 },
      catalogCacheSeconds: 30,
    });
    expect(parse({ RATE_LIMIT_PER_MINUTE: "0" }).rateLimitPerMinute, "a zero limit would refuse everything").toBe(1);
    for (const ttl of ["0", "-1", "a week", ""]) expect(parse({ QUESTION_TTL_HOURS: ttl }).questionTtlMs, `QUESTION_TTL_HOURS=${ttl}`).toBe(168 * 3_600_000);
  });

  it("parses an environment once", () => {
    const env = { RATE_LIMIT_PER_MINUTE: "7" } as Env;
    expect(config(env)).toBe(config(env));
  });
});
