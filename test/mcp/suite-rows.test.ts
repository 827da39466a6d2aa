import { describe, expect, it } from "vitest";
import { call, world } from "../helpers";
import { MODERN, modernPost, post } from "./mcp-helpers";

// What the MCP maintainers' conformance suite checks of a server, as the contract's table fixes it.
describe("MCP, as the protocol's own suite checks it", () => {
  it("calls a tool sent without arguments with {}: its own invalid_request for a tool that needs some, never -32603", async () => {
    const w = await world();
    const projects = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_projects" } }, {}, w.token);
    expect(projects.json.result.structuredContent.items).toEqual([expect.objectContaining({ id: w.projectId })]);
    const chat = await modernPost(w.token, "tools/call", { name: "get_chat" });
    expect(chat.status).toBe(200);
    expect(chat.json.result.isError).toBe(true);
    expect(JSON.parse(chat.json.result.content[0].text)).toMatchObject({ code: "invalid_request", errors: expect.arrayContaining([{ path: "projectId", message: "required" }]) });
  });

  it("answers a method 2026-07-28 removed or never had with HTTP 404 and -32601, ping included; a 2025 request keeps HTTP 200", async () => {
    const w = await world();
    for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/result", "no/such-method"]) {
      const r = await modernPost(w.token, method, method === "tasks/result" ? { taskId: "made-up" } : {});
      expect(r.status, method).toBe(404);
      expect(r.json, method).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32601 } });
    }
    const legacy = await post({ jsonrpc: "2.0", id: 1, method: "no/such-method", params: {} }, {}, w.token);
    expect(legacy.status).toBe(200);
    expect(legacy.json.error.code).toBe(-32601);
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, {}, w.token)).json.result).toEqual({});
  });

  it("answers an MCP-Protocol-Version it does not speak with -32022, naming what it speaks and what was asked", async () => {
    const w = await world();
    const r = await post({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }, { "mcp-protocol-version": "2099-01-01" }, w.token);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32022, data: { supported: [MODERN, "2025-11-25", "2025-06-18"], requested: "2099-01-01" } } });
  });

  it("answers a header and a body that name different revisions with -32020 (HeaderMismatch)", async () => {
    const w = await world();
    const r = await modernPost(w.token, "tools/list", {}, {}, { "io.modelcontextprotocol/protocolVersion": "2099-01-01" });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(-32020);
  });

  it("names the subscription in every notification on a listen stream, its acknowledgement included", async () => {
    const w = await world();
    const r = await modernPost(w.token, "subscriptions/listen", { notifications: {} });
    const frames = r.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)));
    const acknowledged = frames.find((frame) => frame.method === "notifications/subscriptions/acknowledged");
    expect(acknowledged?.params._meta).toEqual({ "io.modelcontextprotocol/subscriptionId": 1 });
  });

  it("ignores the legacy task parameter (SEP-2663): the request is served as without it", async () => {
    const w = await world();
    const r = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_projects", arguments: {}, task: { ttl: 60000 } } }, {}, w.token);
    expect(r.json.result.structuredContent.items).toHaveLength(1);
  });

  it("answers GET /mcp from a valid credential 405 with Allow: POST, OPTIONS", async () => {
    const w = await world();
    const r = await call("GET", "/mcp", { token: w.token, headers: { accept: "text/event-stream" } });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST, OPTIONS");
  });
});
