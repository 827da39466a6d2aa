import { afterEach, describe, expect, vi } from "vitest";
import { sha256Hex } from "../../src/crypto";
import { CreatedApiToken, ApiTokenList } from "../../src/auth/schemas";
import { call, env, expectProblem, inDays, newAccount, newToken, signIn, world } from "../helpers";
import { it } from "../fixtures/chat";

/** The instant `days` ahead (or `at`), written as local time at the given UTC offset. */
function shifted(days: number, offset: string, at = new Date(Date.now() + days * 86_400_000)): string {
  const sign = offset.startsWith("-") ? -1 : 1;
  const [h, m] = offset.slice(1).split(":").map(Number);
  const local = new Date(at.getTime() + sign * (h! * 60 + m!) * 60_000);
  return local.toISOString().replace(/\.\d{3}Z$/, offset);
}

const create = (session: string, body: unknown, headers: Record<string, string> = {}) => call("POST", "/auth/api-tokens", { token: session, body, headers });

afterEach(() => vi.useRealTimers());

describe("POST /auth/api-tokens", () => {
  it("returns the secret once and stores only its SHA-256", async () => {
    const session = await signIn(await newAccount());
    const r = await create(session, { name: "ci", scopes: ["chat:read"], expiresAt: inDays(10) });
    expect(r.status).toBe(201);
    const { token, item } = CreatedApiToken.parse(r.json);
    expect(token).toMatch(/^pct_[0-9A-Za-z]{36,}$/);
    expect(item).toMatchObject({ name: "ci", scopes: ["chat:read"], prefix: token.slice(0, 12), lastUsedAt: null });
    const row = await env.DB.prepare("SELECT * FROM api_tokens WHERE id = ?").bind(item.id).first();
    expect(row?.token_hash).toBe(await sha256Hex(token));
    expect(JSON.stringify(row)).not.toContain(token.slice(12));
    const list = await call("GET", "/auth/api-tokens", { token: session });
    expect(list.text).not.toContain(token.slice(12));
  });

  it.each([
    ["no name", { scopes: ["chat:read"], expiresAt: inDays(1) }],
    ["an empty name", { name: "", scopes: ["chat:read"], expiresAt: inDays(1) }],
    ["a 101-character name", { name: "x".repeat(101), scopes: ["chat:read"], expiresAt: inDays(1) }],
    ["no scopes", { name: "x", scopes: [], expiresAt: inDays(1) }],
    ["an unknown scope", { name: "x", scopes: ["chat:admin"], expiresAt: inDays(1) }],
    ["a repeated scope", { name: "x", scopes: ["chat:read", "chat:read"], expiresAt: inDays(1) }],
    ["a past expiry", { name: "x", scopes: ["chat:read"], expiresAt: inDays(-1) }],
    ["an expiry over 365 days ahead", { name: "x", scopes: ["chat:read"], expiresAt: inDays(366) }],
    ["a non-ISO expiry", { name: "x", scopes: ["chat:read"], expiresAt: "tomorrow" }],
    ["an expiry with neither Z nor an offset", { name: "x", scopes: ["chat:read"], expiresAt: inDays(1).replace("Z", "") }],
    ["an offset expiry in the past", { name: "x", scopes: ["chat:read"], expiresAt: "2020-01-01T00:00:00+02:00" }],
    ["an offset expiry over 365 days ahead", { name: "x", scopes: ["chat:read"], expiresAt: shifted(366, "+02:00") }],
    ["no expiry", { name: "x", scopes: ["chat:read"] }],
    ["an unknown field", { name: "x", scopes: ["chat:read"], expiresAt: inDays(1), admin: true }],
  ])("rejects %s with 400", async (_, body) => {
    const session = await signIn(await newAccount());
    const r = await create(session, body);
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors.length).toBeGreaterThan(0);
  });

  it("says a missing expiresAt is required", async () => {
    const r = await create(await signIn(await newAccount()), { name: "x", scopes: ["chat:read"] });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toEqual([{ path: "expiresAt", message: "required" }]);
  });

  it("accepts an RFC 3339 expiry with an offset and returns it in UTC", async () => {
    const session = await signIn(await newAccount());
    const utc = new Date(Date.now() + 10 * 86_400_000);
    utc.setUTCMilliseconds(0);
    for (const offset of ["+02:00", "-05:30", "+00:00"]) {
      const r = await create(session, { name: "offset", scopes: ["chat:read"], expiresAt: shifted(10, offset, utc) });
      expect(r.status, r.text).toBe(201);
      const { item } = CreatedApiToken.parse(r.json);
      expect(item.expiresAt).toBe(utc.toISOString());
      const row = await env.DB.prepare("SELECT expires_at FROM api_tokens WHERE id = ?").bind(item.id).first<{ expires_at: string }>();
      expect(row?.expires_at).toBe(utc.toISOString());
    }
  });

  it("accepts an expiry 365 days ahead and both scopes", async () => {
    const session = await signIn(await newAccount());
    expect((await create(session, { name: "x", scopes: ["chat:write", "chat:read"], expiresAt: inDays(364.99) })).status).toBe(201);
  });

  it("allows exactly 20 active tokens under 30 parallel creations", async () => {
    const session = await signIn(await newAccount());
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => create(session, { name: `t${i}`, scopes: ["chat:read"], expiresAt: inDays(1) })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(10);
    expectProblem(refused[0]!, 409, "token_limit_reached");
    const list = ApiTokenList.parse((await call("GET", "/auth/api-tokens", { token: session })).json);
    expect(list.items).toHaveLength(20);
    expect(await call("DELETE", `/auth/api-tokens/${list.items[0]!.id}`, { token: session })).toMatchObject({ status: 204 });
    expect((await create(session, { name: "again", scopes: ["chat:read"], expiresAt: inDays(1) })).status).toBe(201);
  });

  it("does not count expired tokens towards the limit", async () => {
    const account = await newAccount();
    const session = await signIn(account);
    const past = new Date(Date.now() - 1000).toISOString();
    await env.DB.batch(
      Array.from({ length: 20 }, (_, i) =>
        env.DB.prepare(
          "INSERT INTO api_tokens (id, account_id, name, token_hash, prefix, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, 'pct_x', '[\"chat:read\"]', ?, ?)",
        ).bind(crypto.randomUUID(), account.id, `old${i}`, `hash-${crypto.randomUUID()}`, past, past),
      ),
    );
    expect((await create(session, { name: "new", scopes: ["chat:read"], expiresAt: inDays(1) })).status).toBe(201);
  });
});

describe("GET and DELETE /auth/api-tokens", () => {
  it("lists unrevoked tokens newest first, expired ones included", async () => {
    const account = await newAccount();
    const session = await signIn(account);
    // Token rows take their time from new Date(), so the whole Date is faked: one second apart, never a tie.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await newToken(session);
    vi.setSystemTime(Date.now() + 1000);
    await newToken(session, ["chat:read"]);
    vi.useRealTimers();
    const past = new Date(Date.now() - 1000).toISOString();
    await env.DB.prepare(
      "INSERT INTO api_tokens (id, account_id, name, token_hash, prefix, scopes, created_at, expires_at) VALUES (?, ?, 'expired', 'h-expired', 'pct_x', '[\"chat:read\"]', ?, ?)",
    )
      .bind(crypto.randomUUID(), account.id, new Date(Date.now() - 5000).toISOString(), past)
      .run();
    const { items } = ApiTokenList.parse((await call("GET", "/auth/api-tokens", { token: session })).json);
    expect(items.map((i) => i.scopes)).toEqual([["chat:read"], ["chat:read", "chat:write"], ["chat:read"]]);
    expect(items[2]!.name).toBe("expired");
    expect(Date.parse(items[0]!.createdAt) - Date.parse(items[1]!.createdAt)).toBe(1000);
  });

  it("revokes with 204, then answers 404 for the same id, another account's id and a malformed id", async () => {
    const a = await world();
    const b = await world();
    const { items } = (await call("GET", "/auth/api-tokens", { token: a.session })).json;
    expectProblem(await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: b.session }), 404, "not_found");
    expect((await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: a.session })).status).toBe(204);
    expectProblem(await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: a.session }), 404, "not_found");
    expectProblem(await call("DELETE", "/auth/api-tokens/not-a-uuid", { token: a.session }), 404, "not_found");
    expect((await call("GET", "/auth/api-tokens", { token: a.session })).json.items).toEqual([]);
  });
});

describe("who may manage tokens", () => {
  it("refuses API tokens, missing credentials and unknown sessions with 401", async ({ w }) => {
    for (const token of [w.token, undefined, "pcs_notarealsession0000000000000000000"]) {
      const r = await call("GET", "/auth/api-tokens", { token });
      expectProblem(r, 401, "unauthorized");
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    expectProblem(await create(w.token, { name: "x", scopes: ["chat:read"], expiresAt: inDays(1) }), 401, "unauthorized");
  });

  it("accepts the session cookie only from an allowed origin", async ({ w }) => {
    const cookie = { cookie: `session=${w.session}` };
    const fromApp = await call("GET", "/auth/api-tokens", { headers: { ...cookie, origin: "http://localhost:5173" } });
    expect(fromApp.status).toBe(200);
    expect(fromApp.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(fromApp.headers.get("access-control-allow-credentials")).toBe("true");
    const fromElsewhere = await call("GET", "/auth/api-tokens", { headers: { ...cookie, origin: "https://evil.example" } });
    expectProblem(fromElsewhere, 401, "unauthorized");
    expect(fromElsewhere.headers.get("access-control-allow-origin")).toBeNull();
    expectProblem(await call("GET", "/auth/api-tokens", { headers: cookie }), 401, "unauthorized"); // no Origin: not a browser we trust
  });

  it("answers credentialed preflight for the allowed origin only", async () => {
    const allowed = await call("OPTIONS", "/auth/api-tokens", { headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" } });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
    const other = await call("OPTIONS", "/auth/api-tokens", { headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});
