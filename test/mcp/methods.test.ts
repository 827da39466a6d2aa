import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, type JSONRPCRequest, McpError, PingRequestSchema, type ServerResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { Methods } from "../../src/mcp/methods";
import { StreamServer } from "../../src/mcp/stream-server";
import { RpcError } from "../../src/mcp/tasks";

const Echo = z.object({ method: z.literal("echo"), params: z.looseObject({ say: z.string() }) });

// A client still there.
const OPEN = new AbortController().signal;

/** A table whose handlers answer, or throw each kind of error a handler throws. */
function table(): Methods {
  const methods = new Methods();
  methods.on("ping", PingRequestSchema, () => ({}));
  methods.on("echo", Echo, (request, extra) => ({ said: request.params.say, id: extra.requestId, token: extra._meta?.progressToken ?? null }) as unknown as ServerResult);
  methods.onRequest("as-sent", (request) => ({ params: request.params ?? null }) as unknown as ServerResult);
  methods.on("mcp-error", z.object({ method: z.literal("mcp-error") }), () => {
    throw new McpError(ErrorCode.InvalidParams, "bad arguments", { field: "x" });
  });
  methods.on("rpc-error", z.object({ method: z.literal("rpc-error") }), () => {
    throw new RpcError(-32602, "exactly this");
  });
  // Whether the call's signal had fired by the time the handler looked.
  methods.onRequest("hung-up", (_request, extra) => ({ aborted: extra.signal.aborted }) as unknown as ServerResult);
  methods.on("crash", z.object({ method: z.literal("crash") }), async () => {
    throw new Error("the handler broke");
  });
  return methods;
}

/** The same request through the SDK's Protocol, as a call answered as an event stream is. */
async function throughProtocol(request: JSONRPCRequest, hangUp = OPEN): Promise<JSONRPCMessage> {
  const sent: JSONRPCMessage[] = [];
  let answered!: () => void;
  const done = new Promise<void>((resolve) => (answered = resolve));
  const transport: Transport = {
    start: async () => {},
    close: async () => {},
    send: async (message) => {
      sent.push(message);
      if ("result" in message || "error" in message) answered();
    },
  };
  await new StreamServer(table(), hangUp).connect(transport);
  transport.onmessage?.(request);
  await done;
  return sent.at(-1)!;
}

const REQUESTS: JSONRPCRequest[] = [
  { jsonrpc: "2.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: "e", method: "echo", params: { say: "hi", _meta: { progressToken: 9 } } },
  { jsonrpc: "2.0", id: 2, method: "echo", params: { say: 5 } as never },
  { jsonrpc: "2.0", id: 3, method: "mcp-error" },
  { jsonrpc: "2.0", id: 4, method: "rpc-error" },
  { jsonrpc: "2.0", id: 5, method: "crash" },
  { jsonrpc: "2.0", id: 6, method: "nowhere" },
  { jsonrpc: "2.0", id: 7, method: "as-sent", params: { name: "x", arguments: [1], extra: { deep: true } } },
  { jsonrpc: "2.0", id: 8, method: "as-sent" },
];

describe("a call answered with one JSON body", () => {
  it.each(REQUESTS.map((r) => [r.method, r.id, r]))("%s (id %s): answered exactly as the SDK's Protocol answers it", async (_m, _id, request) => {
    const answer = await table().answer(request, OPEN);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(await answer.json()).toEqual(await throughProtocol(request));
  });

  it("frames each error as the contract's clients read it", async () => {
    const body = async (request: JSONRPCRequest) => (await table().answer(request, OPEN)).json();
    expect(await body(REQUESTS[3]!)).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: "MCP error -32602: bad arguments", data: { field: "x" } } });
    expect(await body(REQUESTS[4]!)).toEqual({ jsonrpc: "2.0", id: 4, error: { code: -32602, message: "exactly this" } });
    expect(await body(REQUESTS[5]!)).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32603, message: "the handler broke" } });
    expect(await body(REQUESTS[6]!)).toEqual({ jsonrpc: "2.0", id: 6, error: { code: -32601, message: "Method not found" } });
    // A request its schema refuses is an internal error carrying the parser's account, as the SDK answers it.
    const refused = (await body(REQUESTS[2]!)) as { error: { code: number; message: string } };
    expect(refused.error.code).toBe(-32603);
    expect(refused.error.message).toContain("say");
  });

  it("hands a method without a schema its request as sent", async () => {
    const body = async (request: JSONRPCRequest) => (await table().answer(request, OPEN)).json();
    expect(await body(REQUESTS[7]!)).toEqual({ jsonrpc: "2.0", id: 7, result: { params: { name: "x", arguments: [1], extra: { deep: true } } } });
    expect(await body(REQUESTS[8]!)).toEqual({ jsonrpc: "2.0", id: 8, result: { params: null } });
  });

  it("passes the handler its id and progress token", async () => {
    expect(await (await table().answer(REQUESTS[1]!, OPEN)).json()).toEqual({ jsonrpc: "2.0", id: "e", result: { said: "hi", id: "e", token: 9 } });
  });

  it("gives the handler the call's hang-up as its signal, on either way of answering", async () => {
    const request: JSONRPCRequest = { jsonrpc: "2.0", id: 9, method: "hung-up" };
    const gone = AbortSignal.abort();
    expect(await (await table().answer(request, gone)).json()).toMatchObject({ result: { aborted: true } });
    expect(await (await table().answer(request, OPEN)).json()).toMatchObject({ result: { aborted: false } });
    expect(await throughProtocol(request, gone)).toMatchObject({ result: { aborted: true } });
    expect(await throughProtocol(request, OPEN)).toMatchObject({ result: { aborted: false } });
  });

  it("accepts a notification with 202 and no body", async () => {
    const answer = await table().answer({ jsonrpc: "2.0", method: "notifications/initialized" }, OPEN);
    expect(answer.status).toBe(202);
    expect(await answer.text()).toBe("");
  });
});
