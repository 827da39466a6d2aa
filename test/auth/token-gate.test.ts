import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, vi } from "vitest";
import { requirePersonalToken } from "../../src/auth/gate";
import { API_TOKEN_PREFIX, generateSecret, hashSecret } from "../../src/auth/secrets";
import type { TokenGate } from "../../src/auth/token-gate";
import { toApiError, problemResponse } from "../../src/http/problem";
import { call, env, expectProblem, world } from "../helpers";
import { it } from "../fixtures/chat";

async function gateFor(token: string) {
  const hash = await hashSecret(token);
  return { hash, stub: env.TOKEN_GATE.getByName(hash) };
}

describe("TokenGate", () => {
  it("admits exactly the limit of 90 parallel requests and tells when to retry", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    const verdicts = await Promise.all(Array.from({ length: 90 }, () => stub.admit(hash)));
    expect(verdicts.filter((v) => v.kind === "allowed")).toHaveLength(60);
    const limited = verdicts.filter((v) => v.kind === "limited");
    expect(limited).toHaveLength(30);
    for (const v of limited) expect(v.kind === "limited" && v.retryAfterSeconds >= 1 && v.retryAfterSeconds <= 60).toBe(true);
    const remaining = verdicts.flatMap((v) => (v.kind === "allowed" ? [v.remaining] : [])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it("keeps counting across an eviction", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    for (let i = 0; i < 60; i++) await stub.admit(hash);
    await evictDurableObject(stub);
    expect((await stub.admit(hash)).kind).toBe("limited");
  });

  it("frees the budget as the rolling minute moves on", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    const start = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(start);
    for (let i = 0; i < 60; i++) await stub.admit(hash);
    expect((await stub.admit(hash)).kind).toBe("limited");
    vi.spyOn(Date, "now").mockReturnValue(start + 60_001);
    expect((await stub.admit(hash)).kind).toBe("allowed");
  });

  it("refuses a revoked token at once, also after an eviction", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    expect((await stub.admit(hash)).kind).toBe("allowed");
    await stub.revoke(hash);
    expect((await stub.admit(hash)).kind).toBe("invalid");
    await evictDurableObject(stub);
    expect((await stub.admit(hash)).kind).toBe("invalid");
  });

  it("keeps a revocation that arrives before the token was ever used", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    await stub.revoke(hash);
    await evictDurableObject(stub).catch(() => undefined);
    expect((await stub.admit(hash)).kind).toBe("invalid");
  });

  it("refuses an expired token and an unknown one", async ({ w }) => {
    const { hash, stub } = await gateFor(w.token);
    await env.DB.prepare("UPDATE api_tokens SET expires_at = ? WHERE token_hash = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), hash)
      .run();
    expect((await stub.admit(hash)).kind).toBe("invalid");
    const unknown = await hashSecret("pct_unknown");
    expect((await env.TOKEN_GATE.getByName(unknown).admit(unknown)).kind).toBe("invalid");
  });

  it("writes nothing for unknown well-formed tokens, however many are tried", async ({ w }) => {
    const tokens = Array.from({ length: 50 }, () => generateSecret(API_TOKEN_PREFIX));
    const answers = await Promise.all(tokens.map((token) => call("GET", `/v1/projects/${w.projectId}/chats`, { token })));
    expect(answers.map((r) => r.status)).toEqual(tokens.map(() => 401));
    for (const token of tokens) {
      const { stub } = await gateFor(token);
      const stored = await runInDurableObject(stub, (_: TokenGate, state) => ({
        tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\'").toArray(),
        alarm: state.storage.getAlarm(),
      }));
      expect(stored.tables).toEqual([]);
      expect(await stored.alarm).toBeNull();
    }
  });

  it("keeps its storage for a known token across an eviction", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    expect((await stub.admit(hash)).kind).toBe("allowed");
    await evictDurableObject(stub);
    const tables = await runInDurableObject(stub, (_: TokenGate, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .toArray()
        .map((r) => r.name),
    );
    expect(tables).toEqual(expect.arrayContaining(["hits", "meta", "token"]));
    expect((await stub.admit(hash)).kind).toBe("allowed");
  });

  it("stops admitting when the token expires while the object is warm", async () => {
    const { hash, stub } = await gateFor((await world()).token);
    expect((await stub.admit(hash)).kind).toBe("allowed");
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 31 * 86_400_000);
    expect((await stub.admit(hash)).kind).toBe("invalid");
  });

  it("keeps lastUsedAt in the gate, where the token listing reads it, and writes nothing to D1", async ({ clock, w }) => {
    const { hash, stub } = await gateFor(w.token);
    const lastUsedAt = async () => (await call("GET", "/auth/api-tokens", { token: w.session })).json.items[0].lastUsedAt;
    expect(await lastUsedAt()).toBeNull();
    expect(await stub.admit(hash)).toMatchObject({ kind: "allowed" });
    expect(await lastUsedAt()).toBe(new Date(clock.now()).toISOString());
    clock.advance(90_000);
    expect(await stub.admit(hash)).toMatchObject({ kind: "allowed" });
    expect(await lastUsedAt()).toBe(new Date(clock.now()).toISOString());
    expect((await env.DB.prepare("SELECT last_used_at FROM api_tokens WHERE token_hash = ?").bind(hash).first())?.last_used_at).toBeNull();
  });

  it("deletes expired hits in batches, never the newest, and counts exactly after an eviction", async ({ clock, w }) => {
    const { hash, stub } = await gateFor(w.token);
    // One request a second for 200 s: 59 earlier hits are always inside the rolling minute.
    for (let i = 0; i < 200; i++) {
      expect(await stub.admit(hash)).toMatchObject({ kind: "allowed", remaining: i < 59 ? 59 - i : 0 });
      clock.advance(1_000);
    }
    const stored = await runInDurableObject(stub, (_: TokenGate, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM hits").one().n);
    expect(stored, "the minute's hits, plus fewer than one batch of expired ones").toBeGreaterThanOrEqual(59);
    expect(stored).toBeLessThan(59 + 64);
    await evictDurableObject(stub);
    // Read back with its expired rows, the window still holds exactly 59 hits: one more fits, the next does not.
    expect(await stub.admit(hash)).toMatchObject({ kind: "allowed", remaining: 0 });
    expect((await stub.admit(hash)).kind).toBe("limited");
    expect((await stub.standing(hash)).lastUsedAt).toBe(clock.now());
  });

  it("lists a use recorded in D1 before the gates kept it", async ({ w }) => {
    const { hash } = await gateFor(w.token);
    await env.DB.prepare("UPDATE api_tokens SET last_used_at = '2026-01-02T03:04:05.000Z' WHERE token_hash = ?").bind(hash).run();
    expect((await call("GET", "/auth/api-tokens", { token: w.session })).json.items[0].lastUsedAt).toBe("2026-01-02T03:04:05.000Z");
  });
});

describe("the gate middleware", () => {
  const appWith = (gateEnv: object) => {
    const app = new Hono();
    app.use("*", requirePersonalToken as never);
    app.get("*", (c) => c.text("through"));
    app.onError((e) => problemResponse(toApiError(e), "test-request"));
    return (authorization?: string) => app.request("/v1/projects/x/chats", { headers: authorization ? { authorization } : {} }, gateEnv);
  };

  it("refuses missing, malformed and badly checksummed tokens without asking any gate", async () => {
    const getByName = vi.fn();
    const request = appWith({ TOKEN_GATE: { getByName } });
    const tokens = [undefined, "Basic abc", `Bearer pcs_${"a".repeat(38)}`, "Bearer pct_notarealtoken000000000000000000000", `Bearer pct_${"A".repeat(38)}`];
    for (const header of tokens) {
      const r = await request(header);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { code: string }).code).toBe("unauthorized");
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
    }
    expect(getByName).not.toHaveBeenCalled();
  });

  it("never reads a token from the query string", async ({ w }) => {
    const r = await call("GET", `/v1/projects/${w.projectId}/chats?access_token=${w.token}`);
    expectProblem(r, 401, "unauthorized");
  });
});
