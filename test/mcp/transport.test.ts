import { describe, expect } from "vitest";
import packageJson from "../../package.json";
import { API_TOKEN_PREFIX, generateSecret } from "../../src/auth/secrets";
import { call, chatsPath, expectProblem, newChat, world } from "../helpers";
import { initialize, post } from "./mcp-helpers";
import { it } from "../fixtures/chat";

const toolCall = (name: string, args: unknown, id = 7) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const remaining = (r: { headers: Headers }) => Number(/r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]);

describe("/mcp over HTTP", () => {
  it("initializes statelessly: server info, tools capability, instructions and no session id", async ({ w }) => {
    const r = await post(initialize("2025-11-25"), {}, w.token);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect(r.json.result).toMatchObject({
      protocolVersion: "2025-11-25",
      serverInfo: { name: "project-chat", version: packageJson.version },
      capabilities: { tools: { listChanged: false } },
      instructions: expect.stringContaining("list_projects"),
    });
  });

  it.each([
    ["2025-06-18", "2025-06-18"],
    ["2025-03-26", "2025-06-18"],
    ["2024-11-05", "2025-06-18"],
  ])("answers an initialize for %s with %s", async (asked, answered) => {
    const w = await world();
    const r = await post(initialize(asked), {}, w.token);
    expect(r.json.result.protocolVersion).toBe(answered);
  });

  it.each([
    ["no params", undefined, "params is missing"],
    ["no protocolVersion", { capabilities: {}, clientInfo: { name: "c", version: "1" } }, "params.protocolVersion"],
    ["a numeric protocolVersion", { protocolVersion: 20250618, capabilities: {}, clientInfo: { name: "c", version: "1" } }, "params.protocolVersion"],
    ["no clientInfo", { protocolVersion: "2025-06-18", capabilities: {} }, "params.clientInfo"],
    ["a clientInfo without a name", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { version: "1" } }, "params.clientInfo.name"],
  ])("answers an initialize with %s as invalid params (-32602) naming the field", async (_, params, named) => {
    const w = await world();
    const r = await post({ jsonrpc: "2.0", id: 1, method: "initialize", ...(params === undefined ? {} : { params }) }, {}, w.token);
    expect(r.status).toBe(200);
    expect(r.json.error.code).toBe(-32602);
    expect(r.json.error.message).toContain(named);
    expect(r.json.error.message).not.toMatch(/"code":|invalid_type/);
  });

  it("accepts a supported or missing MCP-Protocol-Version header and refuses another with 400 and -32022", async ({ w }) => {
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    expect((await post(list, {}, w.token)).status).toBe(200);
    expect((await post(list, { "mcp-protocol-version": "2025-06-18" }, w.token)).status).toBe(200);
    expect((await post(list, { "mcp-protocol-version": "2025-11-25" }, w.token)).status).toBe(200);
    for (const revision of ["2025-03-26", "1999-01-01"]) {
      const r = await post(list, { "mcp-protocol-version": revision }, w.token);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ id: 2, error: { code: -32022, data: { requested: revision } } });
    }
  });

  it("answers a notification with 202 and no body", async ({ w }) => {
    const r = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, {}, w.token);
    expect(r.status).toBe(202);
    expect(r.text).toBe("");
  });

  it("answers a call that may send progress as an event stream without id lines, and others as JSON", async ({ w, chat }) => {
    const args = { projectId: w.projectId, chatId: chat.id, content: "stream it", waitSeconds: 10 };
    const streamed = await post({ ...toolCall("send_message", args), params: { name: "send_message", arguments: args, _meta: { progressToken: 1 } } }, {}, w.token);
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    expect(streamed.text).not.toMatch(/^id:/m);
    const frames = streamed.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)));
    expect(frames.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { reply: { status: "success" } } } });
    expect(frames.slice(0, -1).every((f) => f.method === "notifications/progress" && f.params.progressToken === 1)).toBe(true);
    // Without a progress token there is nothing to stream.
    const plain = await post(toolCall("send_message", { ...args, content: "plain" }), {}, w.token);
    expect(plain.headers.get("content-type")).toContain("application/json");
    expect(plain.json.result.structuredContent.reply.status).toBe("success");
  });

  it.each(["GET", "DELETE", "PUT", "PATCH"])("answers %s with 405 and Allow: POST, OPTIONS", async (method) => {
    const w = await world();
    const r = await call(method, "/mcp", { token: w.token, headers: { accept: "text/event-stream" } });
    expectProblem(r, 405, "method_not_allowed");
    expect(r.headers.get("allow")).toBe("POST, OPTIONS");
  });

  it("refuses a JSON array (a batch) and a body that is not JSON with 400", async ({ w }) => {
    expectProblem(await post([initialize(), { jsonrpc: "2.0", id: 2, method: "tools/list" }], {}, w.token), 400, "invalid_request");
    const r = await call("POST", "/mcp", { token: w.token, raw: "{nope", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } });
    expectProblem(r, 400, "invalid_request");
  });

  it("refuses a body that is not one JSON object with 400, never a 500", async () => {
    const w = await world();
    for (const body of [null, 5, "x", true, 0, ""]) {
      const r = await post(body, {}, w.token);
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors, JSON.stringify(body)).toEqual([{ path: "(body)", message: "not an object" }]);
    }
  });

  it("refuses an object that is not a JSON-RPC message with a 400 problem, not a JSON-RPC parse error", async () => {
    const w = await world();
    for (const body of [
      {},
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: null },
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: 5 },
      { jsonrpc: "1.0", id: 1, method: "tools/list" },
      { jsonrpc: "2.0", id: {}, method: "tools/list" },
      { jsonrpc: "2.0", id: 1, method: 7 },
    ]) {
      const r = await post(body, {}, w.token);
      expectProblem(r, 400, "invalid_request");
      expect(r.json.jsonrpc, JSON.stringify(body)).toBeUndefined();
    }
  });

  it("refuses an Accept without both application/json and text/event-stream with a 406 problem", async () => {
    const w = await world();
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    for (const accept of [undefined, "application/json", "text/event-stream", "*/*"]) {
      const headers: Record<string, string> = { "content-type": "application/json", ...(accept ? { accept } : {}) };
      const r = await call("POST", "/mcp", { token: w.token, raw: list, headers });
      expectProblem(r, 406, "invalid_request");
      expect(r.json.title, String(accept)).toBe("Not Acceptable");
      expect(r.json.errors).toEqual([{ path: "accept", message: expect.any(String) }]);
    }
    const both = await call("POST", "/mcp", { token: w.token, raw: list, headers: { "content-type": "application/json", accept: "text/event-stream, application/json;q=0.9" } });
    expect(both.status, both.text).toBe(200);
  });

  it("refuses a Content-Type other than JSON with 400, as /v1 does", async () => {
    const w = await world();
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const headers: Record<string, string> = { accept: "application/json, text/event-stream", ...(type ? { "content-type": type } : {}) };
      expectProblem(await call("POST", "/mcp", { token: w.token, raw: list, headers }), 400, "invalid_request");
    }
    const charset = await call("POST", "/mcp", {
      token: w.token,
      raw: list,
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json; charset=utf-8" },
    });
    expect(charset.status, charset.text).toBe(200);
  });

  it("refuses a body over 1 MiB with 413", async ({ w }) => {
    const big = toolCall("list_projects", { padding: "x".repeat(1024 * 1024) });
    expectProblem(await post(big, {}, w.token), 413, "payload_too_large");
  });

  it("refuses a browser Origin other than the application's with 403, and accepts the application's", async ({ w }) => {
    expectProblem(await post(initialize(), { origin: "https://evil.example" }, w.token), 403, "forbidden");
    expect((await post(initialize(), { origin: "http://localhost:5173" }, w.token)).status).toBe(200);
  });

  it("publishes no OAuth metadata: clients use the token as a static header", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"]) {
      expectProblem(await call("GET", path), 404, "not_found");
    }
  });
});

describe("/mcp authorization", () => {
  const expectInvalidToken = (r: Awaited<ReturnType<typeof call>>) => {
    expectProblem(r, 401, "unauthorized");
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
    expect(r.json.jsonrpc).toBeUndefined();
  };

  it("answers 401 before any MCP message for no token, a session token, a made-up one and a malformed one", async ({ w }) => {
    expectInvalidToken(await post(initialize()));
    expectInvalidToken(await post(initialize(), {}, w.session));
    expectInvalidToken(await post(initialize(), {}, generateSecret(API_TOKEN_PREFIX)));
    expectInvalidToken(await post(initialize(), {}, "pct_not-a-token"));
    // Not even a malformed message is read first.
    expectInvalidToken(await call("POST", "/mcp", { raw: "[", headers: { "content-type": "application/json" } }));
  });

  it("answers 401 for a revoked token", async ({ w }) => {
    expect((await post(initialize(), {}, w.token)).status).toBe(200);
    const { items } = (await call("GET", "/auth/api-tokens", { token: w.session })).json;
    expect((await call("DELETE", `/auth/api-tokens/${items[0].id}`, { token: w.session })).status).toBe(204);
    expectInvalidToken(await post(initialize(), {}, w.token));
  });

  it("counts each HTTP request once, whatever its tools call inside, and shares the limit with /v1", async ({ w }) => {
    const c = await newChat(w); // 1
    const send = await post(toolCall("send_message", { projectId: w.projectId, chatId: c.id, content: "count me once" }), {}, w.token);
    expect(send.status, send.text).toBe(200);
    expect(send.json.result.isError).toBeFalsy();
    // Sending read the submission and its reply as well: still one request.
    expect(remaining(send)).toBe(58);
    const list = await call("GET", chatsPath(w), { token: w.token });
    expect(remaining(list)).toBe(57);
    const viaMcp = await post(toolCall("list_chats", { projectId: w.projectId }), {}, w.token);
    expect(remaining(viaMcp)).toBe(56);
    expect(viaMcp.headers.get("ratelimit-policy")).toBe(list.headers.get("ratelimit-policy"));
    for (let i = 0; i < 28; i++) expect((await post({ jsonrpc: "2.0", id: i, method: "tools/list" }, {}, w.token)).status).toBe(200);
    for (let i = 0; i < 28; i++) expect((await call("GET", chatsPath(w), { token: w.token })).status).toBe(200);
    const limited = await post(toolCall("list_projects", {}), {}, w.token);
    expectProblem(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("ratelimit")).toMatch(/r=0/);
    expectProblem(await call("GET", chatsPath(w), { token: w.token }), 429, "rate_limited");
  });
});

describe("/mcp JSON-RPC errors", () => {
  it("answers an unknown tool and non-object arguments with -32602", async ({ w }) => {
    const unknown = await post(toolCall("delete_everything", {}), {}, w.token);
    expect(unknown.json.error.code).toBe(-32602);
    expect((await post({ jsonrpc: "2.0", id: 3, method: "tools/call" }, {}, w.token)).json.error.code).toBe(-32602);
    for (const args of [[1, 2], "projectId", 5, null]) {
      const r = await post(toolCall("list_projects", args), {}, w.token);
      expect(r.json.error?.code, r.text).toBe(-32602);
    }
  });
});
