import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { isJsonRpcMessage } from "../../src/mcp/message";

// Messages the hand check takes, and near misses it must leave to the schema (or refuse with it).
const SHAPES: Record<string, unknown>[] = [
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_projects", arguments: {} } },
  { jsonrpc: "2.0", id: "a", method: "tools/list" },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { _meta: { progressToken: "p", "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } },
  { jsonrpc: "2.0", id: 3, method: "x", params: { _meta: { progressToken: 7 } } },
  { jsonrpc: "2.0", id: 1, result: {} },
  { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "no" } },
  { jsonrpc: "2.0", error: { code: -32700, message: "parse" } },
  { jsonrpc: "2.0", id: 4, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } } },
  // Refused by the schema:
  { jsonrpc: "1.0", id: 1, method: "x" },
  { id: 1, method: "x" },
  { jsonrpc: "2.0", id: 1.5, method: "x" },
  { jsonrpc: "2.0", id: null, method: "x" },
  { jsonrpc: "2.0", id: 2 ** 60, method: "x" },
  { jsonrpc: "2.0", id: 1, method: 5 },
  { jsonrpc: "2.0", id: 1, method: "x", params: [] },
  { jsonrpc: "2.0", id: 1, method: "x", params: null },
  { jsonrpc: "2.0", id: 1, method: "x", params: "p" },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: [] } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: {} } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": {} } } },
  { jsonrpc: "2.0", id: 1, method: "x", extra: true },
  { jsonrpc: "2.0", method: "x", result: {} },
  { jsonrpc: "2.0", id: 1, method: "x", result: {} },
  { jsonrpc: "2.0", id: 1 },
  {},
];

describe("which bodies are JSON-RPC messages", () => {
  it.each(SHAPES.map((shape) => [JSON.stringify(shape), shape]))("%s: as the SDK's schema says", (_name, shape) => {
    expect(isJsonRpcMessage(shape)).toBe(JSONRPCMessageSchema.safeParse(shape).success);
  });

  it("takes the usual call and refuses a near miss (the table is not one-sided)", () => {
    const verdicts = SHAPES.map(isJsonRpcMessage);
    expect(verdicts.filter(Boolean).length).toBe(9);
    expect(verdicts.filter((v) => !v).length).toBe(SHAPES.length - 9);
  });
});
