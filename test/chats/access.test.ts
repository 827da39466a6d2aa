import { describe, expect, vi } from "vitest";
import { admin, call, chatsPath, env, expectProblem, newAccount, newChat, newToken, signIn, world } from "../helpers";
import { it } from "../fixtures/chat";

describe("chats outside one's reach", () => {
  it("answers 404 for unknown chats, foreign projects and malformed ids, without telling which", async ({ w }) => {
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
    expectProblem(await call("GET", `${chatsPath(w)}/${c.id}`, { token: other.token }), 404, "not_found");
    expectProblem(await call("PATCH", `${chatsPath(other)}/${c.id}`, { token: other.token, body: { title: "x" } }), 404, "not_found");
  });
});

describe("project roles", () => {
  it("lets a viewer read but not write, and an editor do both", async ({ w, chat }) => {
    const viewer = await newAccount();
    const editor = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${editor.id}`, { role: "editor" })).status).toBe(200);
    const viewerToken = await newToken(await signIn(viewer));
    const editorToken = await newToken(await signIn(editor));
    expect((await call("GET", `${chatsPath(w)}/${chat.id}`, { token: viewerToken })).status).toBe(200);
    expectProblem(await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: viewerToken, body: { title: "no" } }), 403, "forbidden");
    expectProblem(await call("POST", chatsPath(w), { token: viewerToken, body: { title: "no" } }), 403, "forbidden");
    expect((await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: editorToken, body: { title: "yes" } })).status).toBe(200);
  });

  it("hides a suspended project and a removed member with 404", async ({ w }) => {
    const member = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${member.id}`, { role: "editor" })).status).toBe(200);
    const memberToken = await newToken(await signIn(member));
    expect((await call("GET", chatsPath(w), { token: memberToken })).status).toBe(200);
    expect((await admin("DELETE", `/admin/projects/${w.projectId}/members/${member.id}`)).status).toBe(204);
    expectProblem(await call("GET", chatsPath(w), { token: memberToken }), 404, "not_found");
    expect((await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "suspended" })).status).toBe(200);
    expectProblem(await call("GET", chatsPath(w), { token: w.token }), 404, "not_found");
    expect((await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "active" })).status).toBe(200);
    expect((await call("GET", chatsPath(w), { token: w.token })).status).toBe(200);
  });

  it("reads access after an admin change from that change's bookmark on, so a lagging replica cannot undo it here", async ({ w }) => {
    const member = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${member.id}`, { role: "editor" })).status).toBe(200);
    const memberToken = await newToken(await signIn(member));
    const sessions = vi.spyOn(Object.getPrototypeOf(env.DB), "withSession");
    expect((await admin("DELETE", `/admin/projects/${w.projectId}/members/${member.id}`)).status).toBe(204);
    const afterChange = sessions.mock.calls.length;
    expectProblem(await call("GET", chatsPath(w), { token: memberToken }), 404, "not_found");
    const reads = sessions.mock.calls.slice(afterChange).map(([constraint]) => constraint);
    // From a bookmark, never "first-unconstrained": the nearest replica must have caught up with the removal.
    expect(reads.some((c) => typeof c === "string" && !c.startsWith("first-"))).toBe(true);
    expect(reads).not.toContain("first-unconstrained");
  });

  it("keeps the owner a member", async ({ w }) => {
    expectProblem(await admin("DELETE", `/admin/projects/${w.projectId}/members/${w.account.id}`), 409, "conflict");
  });
});

describe("tokens on the chat endpoints", () => {
  it("checks scopes per operation, naming the missing scope", async ({ w }) => {
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

  it("refuses session tokens, missing, made-up and revoked tokens with 401, saying what the call needed", async ({ w }) => {
    const details: Record<string, string> = {
      session: "This call needs a personal API token (pct_…), not an account session: create one with POST /auth/api-tokens, signed in with this session.",
      none: "This call needs a personal API token: send it as Authorization: Bearer pct_… (POST /auth/api-tokens creates one).",
      madeUp: "The API token is not valid: a personal API token starts with pct_ and is sent whole.",
    };
    for (const [kind, token] of [
      ["session", w.session],
      ["none", undefined],
      ["madeUp", "pct_notarealtoken000000000000000000000"],
    ] as const) {
      const r = await call("GET", chatsPath(w), { token });
      expectProblem(r, 401, "unauthorized");
      expect(r.json.detail).toBe(details[kind]);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
    }
    const { items } = (await call("GET", "/auth/api-tokens", { token: w.session })).json;
    expect((await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: w.session })).status).toBe(204);
    const revoked = await call("GET", chatsPath(w), { token: w.token });
    expectProblem(revoked, 401, "unauthorized");
    expect(revoked.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it("checks the token before the body: 401 beats 400", async ({ w }) => {
    expectProblem(await call("POST", chatsPath(w), { body: { title: "" } }), 401, "unauthorized");
  });

  it("offers no CORS on authenticated endpoints", async ({ w }) => {
    const r = await call("GET", chatsPath(w), { token: w.token, headers: { origin: "https://evil.example" } });
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await call("OPTIONS", chatsPath(w), { headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("allow")).toContain("POST");
  });
});
