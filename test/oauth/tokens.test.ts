import { describe, expect, it, vi } from "vitest";
import { admin, call, env, expectProblem, newAccount, signIn, world } from "../helpers";
import { Browser } from "./browser";
import { approve, authorizePath, connect, exchangeCode, MCP_RESOURCE, mcpCall, pkce, REDIRECT_URI, registeredClient, signInThere, tokenRequest } from "./flow";

const toolText = (r: Awaited<ReturnType<typeof mcpCall>>) => JSON.parse(r.json.result.content[0].text);

/** An authorization code for a fresh client, and what exchanging it needs. */
async function codeFor(account: { email: string; password: string }) {
  const clientId = await registeredClient();
  const { verifier, challenge } = await pkce();
  const path = authorizePath(clientId, challenge, { resource: MCP_RESOURCE });
  const browser = new Browser();
  const query = await approve(browser, path, (await signInThere(browser, path, account)).text);
  return { clientId, verifier, code: query.get("code")! };
}

describe("the token endpoint", () => {
  it("exchanges a code with its verifier for a one-hour access token and a refresh token for /mcp", async () => {
    const w = await world();
    const { clientId, verifier, code } = await codeFor(w.account);
    const r = await exchangeCode(clientId, code, verifier);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "chat:read chat:write", resource: MCP_RESOURCE });
    expect(r.json.access_token).toEqual(expect.any(String));
    expect(r.json.refresh_token).toEqual(expect.any(String));
    expect(r.headers.get("cache-control")).toBe("no-store");
    const tools = await mcpCall(r.json.access_token, "tools/list");
    expect(tools.status, tools.text).toBe(200);
    expect(tools.json.result.tools.map((t: { name: string }) => t.name)).toContain("list_projects");
    const projects = await mcpCall(r.json.access_token, "tools/call", { name: "list_projects", arguments: {} });
    expect(toolText(projects).items.map((p: { id: string }) => p.id)).toEqual([w.projectId]);
  });

  it("refuses a wrong or missing verifier, and takes a code once: reusing it also ends what it gave", async () => {
    const w = await world();
    const { clientId, verifier, code } = await codeFor(w.account);
    const wrong = await exchangeCode(clientId, code, `${verifier}x`);
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe("invalid_grant");
    const missing = await tokenRequest({ grant_type: "authorization_code", client_id: clientId, code, redirect_uri: REDIRECT_URI });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toBe("invalid_request");
    const first = await exchangeCode(clientId, code, verifier);
    expect(first.status, first.text).toBe(200);
    const again = await exchangeCode(clientId, code, verifier);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe("invalid_grant");
    expectProblem(await mcpCall(first.json.access_token, "tools/list"), 401, "unauthorized");
  });

  it("refuses a code_verifier outside 43 to 128 unreserved characters with invalid_grant, before the code is spent", async () => {
    const w = await world();
    const { clientId, verifier, code } = await codeFor(w.account);
    for (const bad of ["abc", "a".repeat(129), "!".repeat(50), `${verifier.slice(0, 42)} `]) {
      const r = await exchangeCode(clientId, code, bad);
      expect(r.status, bad).toBe(400);
      expect(r.json.error).toBe("invalid_grant");
    }
    expect((await exchangeCode(clientId, code, verifier)).status).toBe(200);
  });

  it("requires the redirect_uri the authorization request named, identical, at the exchange", async () => {
    const w = await world();
    const { clientId, verifier, code } = await codeFor(w.account);
    const form = { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, resource: MCP_RESOURCE };
    for (const redirect of [undefined, `${REDIRECT_URI}/other`, `${REDIRECT_URI}?x=1`]) {
      const r = await tokenRequest(redirect === undefined ? form : { ...form, redirect_uri: redirect });
      expect(r.status, String(redirect)).toBe(400);
      expect(r.json.error).toBe("invalid_grant");
    }
    expect((await tokenRequest({ ...form, redirect_uri: REDIRECT_URI })).status).toBe(200);
  });

  it("completes the flow of a client registered as the official Python SDK registers: Basic auth, and client_id in the body as well", async () => {
    const w = await world();
    // What mcp 2.3.0's OAuthClientProvider sends: no token_endpoint_auth_method, so the client is confidential (client_secret_basic).
    const registered = await call("POST", "/oauth/register", {
      body: {
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        application_type: "native",
        client_name: "python-sdk",
      },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.json.token_endpoint_auth_method).toBe("client_secret_basic");
    const { client_id: clientId, client_secret: secret } = registered.json;
    const { verifier, challenge } = await pkce();
    const path = authorizePath(clientId, challenge, { resource: MCP_RESOURCE });
    const browser = new Browser();
    const code = (await approve(browser, path, (await signInThere(browser, path, w.account)).text)).get("code")!;
    // The SDK URL-encodes both parts before base64 (RFC 6749 §2.3.1).
    const basic = { authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}`, "content-type": "application/x-www-form-urlencoded" };
    const post = (form: Record<string, string>, headers = basic) => call("POST", "/oauth/token", { raw: new URLSearchParams(form).toString(), headers });
    const tokens = await post({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: clientId, resource: MCP_RESOURCE });
    expect(tokens.status, tokens.text).toBe(200);
    const refreshed = await post({ grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: clientId });
    expect(refreshed.status, refreshed.text).toBe(200);
    // A body client_id that names another client is still two clients at once.
    const other = await post({ grant_type: "refresh_token", refresh_token: refreshed.json.refresh_token, client_id: "someone-else" });
    expect(other.status).toBe(400);
    expect(other.json.error).toBe("invalid_request");
  });

  it("refuses another client's code, and a grant type it does not know, as RFC 6749 JSON", async () => {
    const w = await world();
    const { verifier, code } = await codeFor(w.account);
    const otherClient = await registeredClient();
    const stolen = await exchangeCode(otherClient, code, verifier);
    expect(stolen.status).toBe(400);
    expect(stolen.json.error).toBe("invalid_grant");
    const unknown = await tokenRequest({ grant_type: "password", client_id: otherClient, username: w.account.email, password: w.account.password });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("unsupported_grant_type");
    expect(unknown.headers.get("content-type")).toContain("application/json");
  });

  it("rotates refresh tokens: the previous one works only until its successor is used", async () => {
    const w = await world();
    const { clientId, refreshToken } = await connect(w.account);
    const refresh = (token: string) => tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: token });
    const second = await refresh(refreshToken);
    expect(second.status, second.text).toBe(200);
    expect(second.json.refresh_token).not.toBe(refreshToken);
    expect((await mcpCall(second.json.access_token, "tools/list")).status).toBe(200);
    // The answer may have been lost: the old token still works once more, until the new one is used.
    const retried = await refresh(refreshToken);
    expect(retried.status, retried.text).toBe(200);
    const third = await refresh(retried.json.refresh_token);
    expect(third.status, third.text).toBe(200);
    const stale = await refresh(refreshToken);
    expect(stale.status).toBe(400);
    expect(stale.json.error).toBe("invalid_grant");
  });

  it("keeps a grant while its refresh tokens are used within 30 days of their issue, and ends it after 30 idle days", async () => {
    const w = await world();
    const { clientId, refreshToken } = await connect(w.account);
    const refresh = (token: string) => tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: token });
    const day = 86_400_000;
    const start = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(start + 20 * day);
    const second = await refresh(refreshToken);
    expect(second.status, second.text).toBe(200);
    // 45 days after the first exchange, 25 after the second token's issue: still connected.
    vi.spyOn(Date, "now").mockReturnValue(start + 45 * day);
    const third = await refresh(second.json.refresh_token);
    expect(third.status, third.text).toBe(200);
    vi.spyOn(Date, "now").mockReturnValue(start + 76 * day);
    expect((await refresh(third.json.refresh_token)).json.error).toBe("invalid_grant");
  });

  it("revokes a refresh token (RFC 7009): the grant and its access tokens end", async () => {
    const w = await world();
    const { clientId, accessToken, refreshToken } = await connect(w.account);
    const r = await tokenRequest({ token: refreshToken, token_type_hint: "refresh_token", client_id: clientId });
    expect(r.status, r.text).toBe(200);
    expectProblem(await mcpCall(accessToken, "tools/list"), 401, "unauthorized");
    expect((await tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken })).json.error).toBe("invalid_grant");
  });
});

describe("an OAuth access token", () => {
  it("is accepted at /mcp only: /v1 and /auth answer 401", async () => {
    const w = await world();
    const { accessToken } = await connect(w.account);
    expectProblem(await call("GET", `/v1/projects/${w.projectId}/chats`, { token: accessToken }), 401, "unauthorized");
    expectProblem(await call("GET", "/v1/projects", { token: accessToken }), 401, "unauthorized");
    expectProblem(await call("GET", "/auth/api-tokens", { token: accessToken }), 401, "unauthorized");
    expectProblem(await call("GET", "/auth/oauth-grants", { token: accessToken }), 401, "unauthorized");
  });

  it("acts with the granted scopes: a chat:read grant reads but cannot send", async () => {
    const w = await world();
    const { accessToken, tokens } = await connect(w.account, { scope: "chat:read" });
    expect(tokens.scope).toBe("chat:read");
    const made = await mcpCall(accessToken, "tools/call", { name: "create_chat", arguments: { projectId: w.projectId, title: "no" } });
    expect(made.json.result.isError).toBe(true);
    expect(toolText(made).code).toBe("insufficient_scope");
    expect((await mcpCall(accessToken, "tools/call", { name: "list_chats", arguments: { projectId: w.projectId } })).json.result.isError).toBeFalsy();
  });

  it("acts with the account's current role: a viewer's grant cannot write, and one who leaves the project loses it", async () => {
    const w = await world();
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    const { accessToken } = await connect(viewer);
    const made = await mcpCall(accessToken, "tools/call", { name: "create_chat", arguments: { projectId: w.projectId, title: "no" } });
    expect(toolText(made).code).toBe("forbidden");
    expect((await admin("DELETE", `/admin/projects/${w.projectId}/members/${viewer.id}`)).status).toBe(204);
    const listed = await mcpCall(accessToken, "tools/call", { name: "list_chats", arguments: { projectId: w.projectId } });
    expect(toolText(listed).code).toBe("not_found");
  });

  it("counts every request to /mcp against its grant's per-minute limit, whichever of the grant's access tokens is sent", async () => {
    const w = await world();
    const { clientId, accessToken, refreshToken } = await connect(w.account);
    const refreshed = await tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken });
    const answers = await Promise.all(Array.from({ length: 61 }, (_, i) => mcpCall(i % 2 ? accessToken : refreshed.json.access_token, "tools/list")));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(60);
    const limited = answers.find((r) => r.status === 429)!;
    expectProblem(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(answers[0]!.headers.get("ratelimit-policy")).toBe('"per-token";q=60;w=60');
    // Another grant of the same account has a minute of its own, and so do the account's personal tokens.
    expect((await mcpCall((await connect(w.account)).accessToken, "tools/list")).status).toBe(200);
    expect((await mcpCall(w.token, "tools/list")).status).toBe(200);
  });
});

describe("connected apps: GET and DELETE /auth/oauth-grants", () => {
  it("lists the account's grants newest first with the client's name, scopes and last use", async () => {
    const w = await world();
    const first = await connect(w.account, { scope: "chat:read" });
    const second = await connect(w.account);
    await mcpCall(first.accessToken, "tools/list");
    const r = await call("GET", "/auth/oauth-grants", { token: w.session });
    expect(r.status, r.text).toBe(200);
    expect(r.json.items).toHaveLength(2);
    const [newest, oldest] = r.json.items;
    expect(newest).toMatchObject({ id: expect.any(String), clientId: second.clientId, clientName: "Test Connector", scopes: ["chat:read", "chat:write"], lastUsedAt: null });
    expect(oldest).toMatchObject({ clientId: first.clientId, scopes: ["chat:read"], lastUsedAt: expect.stringMatching(/Z$/) });
    expect(Date.parse(newest.createdAt)).toBeGreaterThanOrEqual(Date.parse(oldest.createdAt));
    expect(JSON.stringify(r.json)).not.toContain(first.accessToken);
  });

  it("revokes a grant at once: its access and refresh tokens stop, even while KV still holds their records", async () => {
    const w = await world();
    const { clientId, accessToken, refreshToken } = await connect(w.account);
    const [userId, grantId] = accessToken.split(":");
    // What a KV read cached elsewhere could still answer for a minute after the revocation.
    const stale = await env.OAUTH_KV.list({ prefix: `token:${userId}:${grantId}:` });
    const records = await Promise.all(stale.keys.map(async (k) => [k.name, await env.OAUTH_KV.get(k.name)] as const));
    const [app] = (await call("GET", "/auth/oauth-grants", { token: w.session })).json.items;
    expect((await call("DELETE", `/auth/oauth-grants/${app.id}`, { token: w.session })).status).toBe(204);
    for (const [name, value] of records) await env.OAUTH_KV.put(name, value!);
    const refused = await mcpCall(accessToken, "tools/list");
    expectProblem(refused, 401, "unauthorized");
    expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect((await tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken })).json.error).toBe("invalid_grant");
    expect((await call("GET", "/auth/oauth-grants", { token: w.session })).json.items).toEqual([]);
    expectProblem(await call("DELETE", `/auth/oauth-grants/${app.id}`, { token: w.session }), 404, "not_found");
  });

  it("answers 404 for another account's grant, and needs an account session", async () => {
    const [owner, other] = [await world(), await world()];
    await connect(owner.account);
    const [app] = (await call("GET", "/auth/oauth-grants", { token: owner.session })).json.items;
    expectProblem(await call("DELETE", `/auth/oauth-grants/${app.id}`, { token: other.session }), 404, "not_found");
    expectProblem(await call("GET", "/auth/oauth-grants"), 401, "unauthorized");
    expectProblem(await call("GET", "/auth/oauth-grants", { token: owner.token }), 401, "unauthorized");
    expect((await call("GET", "/auth/oauth-grants", { token: owner.session })).json.items).toHaveLength(1);
  });

  it("keeps grants when the password changes (as personal tokens), and ends one when the same client connects again", async () => {
    const w = await world();
    const first = await connect(w.account);
    expect((await admin("PATCH", `/admin/accounts/${w.account.id}`, { password: "a-new-long-password-1" })).status).toBe(200);
    expect((await mcpCall(first.accessToken, "tools/list")).status).toBe(200);
    const session = await signIn({ email: w.account.email, password: "a-new-long-password-1" });
    expect((await call("GET", "/auth/oauth-grants", { token: session })).json.items).toHaveLength(1);
    // Connecting the same client again replaces its grant: the old one stops at its gate at once.
    const { verifier, challenge } = await pkce();
    const path = authorizePath(first.clientId, challenge, { resource: MCP_RESOURCE });
    const query = await approve(first.browser, path, (await signInThere(first.browser, path, { email: w.account.email, password: "a-new-long-password-1" })).text);
    expect((await exchangeCode(first.clientId, query.get("code")!, verifier)).status).toBe(200);
    expectProblem(await mcpCall(first.accessToken, "tools/list"), 401, "unauthorized");
    expect((await call("GET", "/auth/oauth-grants", { token: session })).json.items).toHaveLength(1);
  });
});
