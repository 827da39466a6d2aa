import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CallToolResultSchema, type CallToolResult, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { expect, vi } from "vitest";
import { type Clock, settle } from "../clock";
import { call, room } from "../helpers";

/** answer_question's answer: the fields of one /v1 answer body, every other field null (the tool's schema requires them all). */
export const flatAnswer = (answer: Record<string, unknown>) => ({ optionIds: null, text: null, decision: null, reason: null, connected: null, decline: null, ...answer });

export const MCP_URL = "https://service.test/mcp";

/** The SDK's own client over Streamable HTTP, its requests served by the Worker's fetch handler. */
export async function connect(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
  });
  // Ajv (the client's default) compiles with new Function, which workerd forbids.
  const client = new Client({ name: "mcp-test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return client;
}

export type McpClient = Awaited<ReturnType<typeof connect>>;

/** A tool call's result, checked against the tool's output schema by the client. */
export const callTool = async (client: McpClient, name: string, args: Record<string, unknown> = {}, options?: RequestOptions) =>
  (await client.callTool({ name, arguments: args }, CallToolResultSchema, options)) as CallToolResult;

/** The structured answer of a successful call; its one text item holds the same JSON. */
export function success<T = any>(result: CallToolResult): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(result.content).toHaveLength(1);
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** The problem a failed call holds as its one text item, with no structured content. */
export function toolProblem(result: CallToolResult, code: string) {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(result.content).toHaveLength(1);
  const problem = JSON.parse((result.content[0] as { text: string }).text);
  expect(problem).toMatchObject({ type: `urn:project-chat:problem:${code}`, code, status: expect.any(Number), detail: expect.any(String) });
  return problem;
}

/** A raw POST to /mcp, for what the SDK client would never send. */
export const post = (body: unknown, headers: Record<string, string> = {}, token?: string) =>
  call("POST", "/mcp", { token, body, headers: { accept: "application/json, text/event-stream", ...headers } });

export const initialize = (protocolVersion = "2025-06-18") => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** The chat object's stream pulse, now: keep-alives, and leases renewed. */
export const pulse = (chatId: string) => room(chatId).pulseListeners(Date.now());

/** Waits (real time, briefly) until the chat object holds `count` listeners: a wait attaches once its call has reached the chat. */
export const untilListening = (chatId: string, count: number) => vi.waitFor(async () => expect(await room(chatId).listenerCount()).toBe(count), { timeout: 5_000, interval: 20 });

export const MODERN = "2026-07-28";

/** A raw 2026-07-28 request, with the headers and envelope its SDK sends unless a test leaves them out. */
export function modernPost(token: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string | null> = {}, meta: Record<string, unknown> = {}) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: { ...params, _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}, ...meta } },
  };
  const all: Record<string, string | null> = {
    authorization: `Bearer ${token}`,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null));
  return call("POST", "/mcp", { headers: sent, raw: JSON.stringify(body) });
}

/** Runs the chat's alarms while a call waits (the clock is frozen), until the call has answered. */
export async function whileWaiting<T>(chatId: string, clock: Clock, answer: Promise<T>): Promise<T> {
  let done = false;
  const result = answer.finally(() => {
    done = true;
  });
  while (!done) {
    await settle(room(chatId), clock);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return result;
}

/** The v1 SDK's client on a 2025 revision, declaring elicitation and answering each form with `respond`. */
export async function elicitingClient(
  token: string,
  respond: (request: { params: Record<string, unknown> }) => ElicitResult | Promise<ElicitResult>,
  elicitation: Record<string, unknown> = { form: {}, url: {} },
) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
  });
  const client = new Client({ name: "mcp-eliciting", version: "1.0.0" }, { capabilities: { elicitation }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const asked: Record<string, unknown>[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params as Record<string, unknown>);
    return respond(request as { params: Record<string, unknown> });
  });
  await client.connect(transport);
  return { client, asked, transport };
}
