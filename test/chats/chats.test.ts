import { describe, expect, it } from "vitest";
import { Chat, ChatList } from "../../src/chats/schemas";
import { admin, call, chatsPath, expectProblem, newAccount, newChat, newToken, signIn, world } from "../helpers";

describe("chat endpoints", () => {
  it("creates an empty chat, reads and renames it", async () => {
    const w = await world();
    const created = await call("POST", chatsPath(w), { token: w.token, body: { title: "First" } });
    expect(created.status).toBe(201);
    const chat = Chat.parse(created.json);
    expect(chat).toMatchObject({ title: "First", archivedAt: null, lastMessageAt: null, latestAgentPreview: "", isWorking: false, queuedCount: 0, isAwaitingUser: false });
    expect(Chat.parse((await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token })).json)).toEqual(chat);
    const renamed = await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "Renamed" } });
    expect(renamed.json.title).toBe("Renamed");
    expect(renamed.json.updatedAt >= chat.updatedAt).toBe(true);
    expect((await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token })).json.title).toBe("Renamed");
  });

  it.each([[{}], [{ title: "" }], [{ title: "x".repeat(161) }], [{ title: 5 }], [{ title: null }], [{ title: "ok", extra: 1 }]])(
    "rejects the title body %j with 400",
    async (body) => {
      const w = await world();
      expectProblem(await call("POST", chatsPath(w), { token: w.token, body }), 400, "invalid_request");
    },
  );

  it("counts title length in characters, so 160 emoji fit", async () => {
    const w = await world();
    expect((await call("POST", chatsPath(w), { token: w.token, body: { title: "😀".repeat(160) } })).status).toBe(201);
    expectProblem(await call("POST", chatsPath(w), { token: w.token, body: { title: "😀".repeat(161) } }), 400);
  });

  it("lists active chats newest first, archived ones with archived=true", async () => {
    const w = await world();
    const a = await newChat(w, "A");
    const b = await newChat(w, "B");
    const c = await newChat(w, "C");
    await call("PATCH", `${chatsPath(w)}/${a.id}`, { token: w.token, body: { title: "A2" } });
    const list = ChatList.parse((await call("GET", chatsPath(w), { token: w.token })).json);
    expect(list.items.map((x) => x.id)).toEqual([a.id, c.id, b.id]);
    const archived = await call("POST", `${chatsPath(w)}/${b.id}/archive`, { token: w.token });
    expect(archived.json.archivedAt).toMatch(/Z$/);
    expect((await call("GET", chatsPath(w), { token: w.token })).json.items.map((x: { id: string }) => x.id)).toEqual([a.id, c.id]);
    expect((await call("GET", `${chatsPath(w)}?archived=false`, { token: w.token })).json.items).toHaveLength(2);
    expect((await call("GET", `${chatsPath(w)}?archived=true`, { token: w.token })).json.items.map((x: { id: string }) => x.id)).toEqual([b.id]);
    const restored = await call("POST", `${chatsPath(w)}/${b.id}/restore`, { token: w.token });
    expect(restored.json.archivedAt).toBeNull();
    expect((await call("GET", chatsPath(w), { token: w.token })).json.items.map((x: { id: string }) => x.id)).toEqual([b.id, a.id, c.id]);
  });

  it("keeps archive and restore idempotent", async () => {
    const w = await world();
    const c = await newChat(w);
    const first = await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token });
    const again = await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token });
    expect(again.json.archivedAt).toBe(first.json.archivedAt);
    expect((await call("POST", `${chatsPath(w)}/${c.id}/restore`, { token: w.token })).status).toBe(200);
    expect((await call("POST", `${chatsPath(w)}/${c.id}/restore`, { token: w.token })).json.archivedAt).toBeNull();
  });

  it("rejects unknown list query values and parameters", async () => {
    const w = await world();
    expectProblem(await call("GET", `${chatsPath(w)}?archived=yes`, { token: w.token }), 400);
    expectProblem(await call("GET", `${chatsPath(w)}?page=2`, { token: w.token }), 400);
  });

  it("answers 404 for unknown chats, foreign projects and malformed ids, without telling which", async () => {
    const w = await world();
    const other = await world();
    const c = await newChat(w);
    const paths = [
      `${chatsPath(w)}/${crypto.randomUUID()}`,
      `${chatsPath(other)}/${c.id}`,
      `${chatsPath(w)}/not-a-uuid`,
      `/v1/projects/${crypto.randomUUID()}/chats`,
      `/v1/projects/not-a-uuid/chats`,
    ];
    const details: string[] = [];
    for (const path of paths) {
      const r = await call("GET", path, { token: path.startsWith(chatsPath(other)) ? other.token : w.token });
      expectProblem(r, 404, "not_found");
      details.push(r.json.detail);
    }
    expect(details[1]).toBe(details[0]); // someone else's chat reads exactly like a missing one
    expectProblem(await call("GET", `${chatsPath(w)}/${c.id}`, { token: other.token }), 404);
    expectProblem(await call("PATCH", `${chatsPath(other)}/${c.id}`, { token: other.token, body: { title: "x" } }), 404);
  });
});

describe("project access", () => {
  it("lets a viewer read but not write, and an editor do both", async () => {
    const w = await world();
    const c = await newChat(w);
    const viewer = await newAccount();
    const editor = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${editor.id}`, { role: "editor" })).status).toBe(200);
    const viewerToken = await newToken(await signIn(viewer));
    const editorToken = await newToken(await signIn(editor));
    expect((await call("GET", `${chatsPath(w)}/${c.id}`, { token: viewerToken })).status).toBe(200);
    expectProblem(await call("PATCH", `${chatsPath(w)}/${c.id}`, { token: viewerToken, body: { title: "no" } }), 403, "forbidden");
    expectProblem(await call("POST", chatsPath(w), { token: viewerToken, body: { title: "no" } }), 403, "forbidden");
    expect((await call("PATCH", `${chatsPath(w)}/${c.id}`, { token: editorToken, body: { title: "yes" } })).status).toBe(200);
  });

  it("hides a suspended project and a removed member with 404", async () => {
    const w = await world();
    const member = await newAccount();
    await admin("PUT", `/admin/projects/${w.projectId}/members/${member.id}`, { role: "editor" });
    const memberToken = await newToken(await signIn(member));
    expect((await call("GET", chatsPath(w), { token: memberToken })).status).toBe(200);
    expect((await admin("DELETE", `/admin/projects/${w.projectId}/members/${member.id}`)).status).toBe(204);
    expectProblem(await call("GET", chatsPath(w), { token: memberToken }), 404);
    expect((await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "suspended" })).status).toBe(200);
    expectProblem(await call("GET", chatsPath(w), { token: w.token }), 404);
    await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "active" });
    expect((await call("GET", chatsPath(w), { token: w.token })).status).toBe(200);
  });

  it("keeps the owner a member", async () => {
    const w = await world();
    expectProblem(await admin("DELETE", `/admin/projects/${w.projectId}/members/${w.account.id}`), 409, "conflict");
  });
});

describe("tokens on the chat endpoints", () => {
  it("checks scopes per operation, naming the missing scope", async () => {
    const w = await world();
    const readOnly = await newToken(w.session, ["chat:read"]);
    const writeOnly = await newToken(w.session, ["chat:write"]);
    expect((await call("GET", chatsPath(w), { token: readOnly })).status).toBe(200);
    const denied = await call("POST", chatsPath(w), { token: readOnly, body: { title: "x" } });
    expectProblem(denied, 403, "insufficient_scope");
    expect(denied.headers.get("www-authenticate")).toBe('Bearer realm="api", error="insufficient_scope", scope="chat:write"');
    const noRead = await call("GET", chatsPath(w), { token: writeOnly });
    expectProblem(noRead, 403, "insufficient_scope");
    expect(noRead.headers.get("www-authenticate")).toContain('scope="chat:read"');
    expect((await call("POST", chatsPath(w), { token: writeOnly, body: { title: "x" } })).status).toBe(201);
  });

  it("refuses session tokens, missing, made-up and revoked tokens with 401", async () => {
    const w = await world();
    for (const token of [w.session, undefined, "pct_notarealtoken000000000000000000000"]) {
      const r = await call("GET", chatsPath(w), { token });
      expectProblem(r, 401, "unauthorized");
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
    }
    const { items } = (await call("GET", "/auth/api-tokens", { token: w.session })).json;
    expect((await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: w.session })).status).toBe(204);
    expectProblem(await call("GET", chatsPath(w), { token: w.token }), 401);
  });

  it("checks the token before the body: 401 beats 400, 429 beats 403", async () => {
    const w = await world();
    expectProblem(await call("POST", chatsPath(w), { body: { title: "" } }), 401);
    const readOnly = await newToken(w.session, ["chat:read"]);
    for (let i = 0; i < 60; i++) await call("GET", chatsPath(w), { token: readOnly });
    expectProblem(await call("POST", chatsPath(w), { token: readOnly, body: { title: "x" } }), 429, "rate_limited");
  });

  it("sends rate-limit headers and refuses the 61st request with Retry-After", async () => {
    const w = await world();
    const first = await call("GET", chatsPath(w), { token: w.token });
    expect(first.headers.get("ratelimit-policy")).toBe('"per-token";q=60;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"per-token";r=59;t=\d+$/);
    const notFound = await call("GET", `${chatsPath(w)}/${crypto.randomUUID()}`, { token: w.token });
    expect(notFound.headers.get("ratelimit")).toMatch(/r=58/); // counted whatever the outcome
    for (let i = 0; i < 58; i++) await call("GET", chatsPath(w), { token: w.token });
    const over = await call("GET", chatsPath(w), { token: w.token });
    expectProblem(over, 429, "rate_limited");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect((await call("GET", chatsPath(w), { token: await newToken(w.session) })).status).toBe(200);
  });

  it("lets exactly 60 of 90 parallel requests through", async () => {
    const w = await world();
    const results = await Promise.all(Array.from({ length: 90 }, () => call("GET", chatsPath(w), { token: w.token })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(60);
    expect(results.filter((r) => r.status === 429)).toHaveLength(30);
  });

  it("offers no CORS on authenticated endpoints", async () => {
    const w = await world();
    const r = await call("GET", chatsPath(w), { token: w.token, headers: { origin: "https://evil.example" } });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await call("OPTIONS", chatsPath(w), { headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("allow")).toContain("POST");
  });
});
