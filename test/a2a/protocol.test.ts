import { describe, expect, it } from "vitest";
import { call, expectProblem, newAccount, newToken, world } from "../helpers";
import { connect } from "../oauth/flow";
import { agentPath, errorOf, ORIGIN, resultOf, rpc, userMessage } from "./a2a-helpers";

const A2A_METADATA = `${ORIGIN}/.well-known/oauth-protected-resource/a2a`;

describe("A2A JSON-RPC: credentials, limits and the order of refusals", () => {
  it("refuses a missing, malformed or session credential with 401 before reading the body, pointing at /a2a's OAuth metadata", async () => {
    const w = await world();
    for (const token of [undefined, "pct_nonsense", w.session]) {
      const r = await call("POST", agentPath(w.projectId), { ...(token ? { token } : {}), raw: "not json", headers: { "content-type": "text/plain" } });
      expectProblem(r, 401, "unauthorized");
      expect(r.headers.get("www-authenticate")).toContain(`resource_metadata="${A2A_METADATA}"`);
    }
    const metadata = await call("GET", "/.well-known/oauth-protected-resource/a2a");
    expect(metadata.json).toMatchObject({ resource: `${ORIGIN}/a2a`, authorization_servers: [ORIGIN] });
  });

  it("then the body: a Content-Type that is no JSON is 415; not JSON -32700; a batch or no object -32600; an unknown method -32601", async () => {
    const w = await world();
    const post = (raw: string, type = "application/json") => call("POST", agentPath(w.projectId), { token: w.token, raw, headers: { "content-type": type, "a2a-version": "1.0" } });
    expectProblem(await post("{}", "text/plain"), 415, "invalid_request");
    expect((await post("{", "application/a2a+json")).json.error.code).toBe(-32700);
    expect((await post("[]")).json.error.code).toBe(-32600);
    expect((await post('"x"')).json.error.code).toBe(-32600);
    expect((await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "Nope", params: {} }))).json.error.code).toBe(-32601);
    // Not a JSON-RPC 2.0 request object: another version, no method, an id that is neither a string nor an integer.
    for (const request of [
      { jsonrpc: "1.0", id: 1, method: "GetTask", params: { id: "x" } },
      { id: 1, method: "GetTask" },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "2.0", id: 1.5, method: "GetTask" },
      { jsonrpc: "2.0", id: {}, method: "GetTask" },
    ]) {
      expect((await post(JSON.stringify(request))).json.error.code, JSON.stringify(request)).toBe(-32600);
    }
    // Before the version and the scope: a read-only token sending a broken request, or an unknown method under a version not served.
    const reader = await newToken(w.session, ["chat:read"]);
    const broken = await call("POST", agentPath(w.projectId), {
      token: reader,
      raw: '{"id":1,"method":"SendMessage"}',
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
    });
    expect(broken.json.error.code).toBe(-32600);
    const unknown = await call("POST", agentPath(w.projectId), { token: w.token, body: { jsonrpc: "2.0", id: 2, method: "Nope" }, headers: { "a2a-version": "9.9" } });
    expect(unknown.json).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it("then the version: 1.0 and 0.3 are served (1.0.x is 1.0), anything else VersionNotSupported", async () => {
    const w = await world();
    const other = await errorOf(rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() }, { "a2a-version": "2.0" }));
    expect(other.code).toBe(-32009);
    expect((await errorOf(rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() }, { "a2a-version": "1.0.1" }))).code).toBe(-32001);
  });

  it("then the scope: a read-only token may read but not send (403 insufficient_scope naming chat:write)", async () => {
    const w = await world();
    const reader = await newToken(w.session, ["chat:read"]);
    const r = await rpc(reader, w.projectId, "SendMessage", { message: userMessage("x") });
    expectProblem(r, 403, "insufficient_scope");
    expect(r.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="chat:write"');
    expect((await errorOf(rpc(reader, w.projectId, "GetTask", { id: crypto.randomUUID() }))).code).toBe(-32001);
    const writer = await newToken(w.session, ["chat:write"]);
    expectProblem(await rpc(writer, w.projectId, "ListTasks", { contextId: crypto.randomUUID() }), 403, "insufficient_scope");
  });

  it("counts every request against the token's per-minute limit, the same counter as /v1, and says so in RateLimit headers", async () => {
    const w = await world();
    const first = await rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() });
    const remaining = (r: { headers: Headers }) => Number(/r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]);
    const v1 = await call("GET", "/v1/projects", { token: w.token });
    const second = await rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() });
    expect(remaining(v1)).toBe(remaining(first) - 1);
    expect(remaining(second)).toBe(remaining(first) - 2);
    // The card is not counted.
    await call("GET", `${agentPath(w.projectId)}/.well-known/agent-card.json`);
    expect(remaining(await rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() }))).toBe(remaining(first) - 3);
  });

  it("echoes the extensions asked for that it supports", async () => {
    const w = await world();
    const r = await rpc(w.token, w.projectId, "GetTask", { id: crypto.randomUUID() }, { "a2a-extensions": "urn:project-chat:a2a:usage:v1, urn:other:thing" });
    expect(r.headers.get("a2a-extensions")).toBe("urn:project-chat:a2a:usage:v1");
  });

  it("takes an OAuth grant made for /a2a, and refuses one made for /mcp (and an /a2a grant on /mcp)", async () => {
    const account = await newAccount();
    const project = await call("POST", "/admin/projects", { token: "test-admin-token", body: { name: "oauth project", ownerAccountId: account.id } });
    const projectId = project.json.id as string;
    const a2a = await connect(account, { resource: `${ORIGIN}/a2a` });
    const card = await resultOf(rpc(a2a.accessToken, projectId, "GetExtendedAgentCard"));
    expect(card.name).toBe("oauth project");
    const mcp = await connect(account);
    expectProblem(await rpc(mcp.accessToken, projectId, "GetExtendedAgentCard"), 401, "unauthorized");
    const atMcp = await call("POST", "/mcp", {
      token: a2a.accessToken,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(atMcp.status).toBe(401);
  });

  it("takes a grant whose request named no resource, as /mcp does", async () => {
    const account = await newAccount();
    const project = await call("POST", "/admin/projects", { token: "test-admin-token", body: { name: "unnamed resource", ownerAccountId: account.id } });
    const unnamed = await connect(account, { resource: null });
    expect((await resultOf(rpc(unnamed.accessToken, project.json.id, "GetExtendedAgentCard"))).name).toBe("unnamed resource");
    const atMcp = await call("POST", "/mcp", {
      token: unnamed.accessToken,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(atMcp.status, atMcp.text).toBe(200);
  });
});
