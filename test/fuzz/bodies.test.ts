import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { CreateAccountBody } from "../../src/admin/accounts-routes";
import { Maintenance } from "../../src/admin/maintenance-routes";
import { CreateApiTokenRequest } from "../../src/auth/schemas";
import { CatalogDocument } from "../../src/catalog/schema";
import { ChatTitleBody, SendMessageBody } from "../../src/chats/schemas";
import { catalogFixture } from "../fixtures/catalog";
import { admin, call, chatsPath, env, newChat, world, type World } from "../helpers";

let w: World;
let chatId: string;
let catalogBefore: unknown;

beforeAll(async () => {
  w = await world();
  chatId = (await newChat(w, "fuzz")).id;
  expect((await admin("PUT", "/admin/catalog", catalogFixture())).status).toBe(204);
  catalogBefore = (await admin("GET", "/admin/catalog")).json;
});

// Hundreds of requests per property: on a busy machine (a whole npm test on two shared cores) one takes several seconds.
const PROPERTIES = { timeout: 60_000 };

/** Everything a hostile or broken client might send as a body. */
const hostileBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.anything({ withObjectString: true, withNullPrototype: true }).map((v) => {
    try {
      return JSON.stringify(v) ?? "null";
    } catch {
      return "{}";
    }
  }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc
    .dictionary(fc.constantFrom("__proto__", "constructor", "prototype", "title", "content", "name", "scopes", "expiresAt", "email", "password", "plans"), fc.jsonValue())
    .map((o) => JSON.stringify(o).replace('"prototype"', '"__proto__"')),
  fc.constantFrom(
    '{"__proto__":{"isAdmin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{"title":{"$gt":""}}',
    '{"content":["a"]}',
    "\u0000\u0001",
    "{",
    "[]",
    "null",
    "1e999",
  ),
  fc.integer({ min: 1, max: 200_000 }).map((n) => JSON.stringify({ title: "x".repeat(n), content: "y".repeat(n), name: "z".repeat(n) })),
);
const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, ...bytes, 0x22, 0x7d]));

// Each target with the schema of the bodies its route accepts: those are not hostile. Sign-in has
// none: a body of the right shape is still refused, as no such account exists.
type Target = { method: string; path: string; token: string | undefined; headers: Record<string, string>; accepts?: z.ZodType };
const targets = (): Target[] => [
  { method: "POST", path: chatsPath(w), token: w.token, headers: {}, accepts: ChatTitleBody },
  { method: "PATCH", path: `${chatsPath(w)}/${chatId}`, token: w.token, headers: {}, accepts: ChatTitleBody },
  { method: "POST", path: `${chatsPath(w)}/${chatId}/messages`, token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, accepts: SendMessageBody },
  { method: "POST", path: "/auth/api-tokens", token: w.session, headers: {}, accepts: CreateApiTokenRequest },
  { method: "POST", path: "/auth/token", token: undefined, headers: {} },
  { method: "PUT", path: "/admin/catalog", token: "test-admin-token", headers: {}, accepts: CatalogDocument },
  { method: "POST", path: "/admin/accounts", token: "test-admin-token", headers: {}, accepts: CreateAccountBody },
  { method: "PUT", path: "/admin/maintenance", token: "test-admin-token", headers: {}, accepts: Maintenance },
];

/**
 * True when the request is one the route must accept: JSON sent as JSON that its body schema accepts
 * (`{"title":" "}` is a valid chat title). Those are left out by construction: the property is about
 * everything else.
 */
function validFor(target: Target, raw: string | Uint8Array, contentType: string): boolean {
  if (!target.accepts || typeof raw !== "string" || !contentType.startsWith("application/json")) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return false;
  }
  return target.accepts.safeParse(parsed).success;
}

async function snapshot() {
  const tokens = await env.DB.prepare("SELECT COUNT(*) AS n FROM api_tokens").first<{ n: number }>();
  const accounts = await env.DB.prepare("SELECT COUNT(*) AS n FROM accounts").first<{ n: number }>();
  const chat = await env.CHAT_ROOM.getByName(chatId).get(w.projectId);
  const page = await env.CHAT_ROOM.getByName(chatId).messages(w.projectId, undefined, 100);
  const list = await env.DB.prepare("SELECT COUNT(*) AS n FROM chat_index WHERE project_id = ?").bind(w.projectId).first<{ n: number }>();
  return { tokens: tokens!.n, accounts: accounts!.n, chat, page, list: list!.n };
}

function expectClientProblem(r: { status: number; headers: Headers; json: any }, what: string) {
  expect(r.status, what).toBeGreaterThanOrEqual(400);
  expect(r.status, what).toBeLessThan(500);
  expect(r.headers.get("content-type"), what).toContain("application/problem+json");
  expect(r.json?.status, what).toBe(r.status);
}

describe("hostile request bodies", PROPERTIES, () => {
  it("always get a 4xx problem and change nothing", async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 7 }),
        fc.oneof(hostileBody, invalidUtf8),
        fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", ""),
        async (t, raw, contentType) => {
          const target = targets()[t]!;
          if (validFor(target, raw, contentType)) return;
          const headers: Record<string, string> = { ...target.headers, ...(contentType ? { "content-type": contentType } : {}) };
          const r = await call(target.method, target.path, { token: target.token, raw, headers });
          expectClientProblem(r, `${target.method} ${target.path} ${String(raw).slice(0, 80)}`);
        },
      ),
      { numRuns: 300 },
    );
    expect(await snapshot()).toEqual(before);
    expect((await admin("GET", "/admin/catalog")).json).toEqual(catalogBefore);
  });

  it("refuse a 1 MB body with a 4xx problem", async () => {
    for (const target of targets()) {
      const raw = JSON.stringify({ title: "x".repeat(1024 * 1024), content: "x".repeat(1024 * 1024) });
      expectClientProblem(await call(target.method, target.path, { token: target.token, raw, headers: { ...target.headers, "content-type": "application/json" } }), target.path);
    }
  });
});

describe("hostile headers", PROPERTIES, () => {
  const headerValue = fc
    .oneof(fc.string({ maxLength: 200 }), fc.constantFrom("", " ", "Bearer", "Bearer ", "Bearer pct_", "bearer pcs_x", "*", 'W/"x"', "ru;q=abc"))
    .filter((v) => /^[\t\x20-\x7e]*$/.test(v));

  it("never cause a 500 on any route", async () => {
    const paths = () => [
      "/v1/plans",
      "/v1/poll",
      chatsPath(w),
      `${chatsPath(w)}/${chatId}`,
      `${chatsPath(w)}/${chatId}/messages?limit=5`,
      `${chatsPath(w)}/${chatId}/queue`,
      "/auth/api-tokens",
      "/admin/catalog",
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 7 }),
        fc.constantFrom("authorization", "accept-language", "if-none-match", "idempotency-key", "origin", "cookie", "content-type", "x-request-id"),
        headerValue,
        async (p, name, value) => {
          const r = await call("GET", paths()[p]!, { headers: { [name]: value } });
          expect(r.status, `${name}: ${value}`).toBeLessThan(500);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("never cause a 500 from odd query strings and idempotency keys", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), async (query, key) => {
        const q = encodeURIComponent(query);
        for (const path of [`${chatsPath(w)}?archived=${q}`, `${chatsPath(w)}/${chatId}/messages?cursor=${q}&limit=${q}`]) {
          const r = await call("GET", path, { token: w.token });
          expect(r.status, path).toBeLessThan(500);
        }
        const sent = await call("POST", `${chatsPath(w)}/${chatId}/messages`, {
          token: w.token,
          headers: { "idempotency-key": key.replace(/[^\x20-\x7e]/g, "") },
          body: { content: "" },
        });
        expect(sent.status).toBe(400);
        expect(sent.json.code).toBe("invalid_request");
      }),
      { numRuns: 100 },
    );
  });
});
