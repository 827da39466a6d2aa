import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The revisions /mcp speaks. 2026-07-28 is stateless by design: no `initialize`, every request carries
 * its revision and the client's capabilities in `params._meta` (and the revision, method and tool name
 * in headers), `server/discover` says what the server offers. The 2025 revisions start with `initialize`.
 */
const MODERN_REVISION = "2026-07-28";
export const LEGACY_REVISIONS = ["2025-11-25", "2025-06-18"];
const REVISIONS = [MODERN_REVISION, ...LEGACY_REVISIONS];

const META = {
  revision: "io.modelcontextprotocol/protocolVersion",
  capabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

// 2026-07-28's error codes for what a request's envelope and headers get wrong (answered on HTTP 400).
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_REVISION = -32022;
const INVALID_PARAMS = -32602;

/** A 2026-07-28 request refused before it reaches a handler: the JSON-RPC error, sent with HTTP 400. */
export class RevisionRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export type Era = { kind: "legacy" } | { kind: "modern" };

const TASK_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);
// The requests 2026-07-28 serves here (the task methods only while handles can be sealed); any other is unknown to it.
const MODERN_METHODS = new Set(["server/discover", "tools/list", "tools/call", "subscriptions/listen"]);

/**
 * On 2026-07-28, a request for a method it removed (`initialize`, `ping`, …) or never had: Streamable HTTP answers it
 * with HTTP 404 and -32601. A 2025 request keeps HTTP 200 for an unknown method (a 404 would end a 2025 client's session).
 */
export function unknownToModern(message: JSONRPCMessage, era: Era, withTasks: boolean): boolean {
  if (era.kind !== "modern" || !("method" in message) || !("id" in message)) return false;
  return !MODERN_METHODS.has(message.method) && !(withTasks && TASK_METHODS.has(message.method));
}

/** A request's legacy `task` parameter (SEP-2663) is ignored: the request is served as without it. */
export function withoutLegacyTask(message: JSONRPCMessage): JSONRPCMessage {
  const params = "params" in message ? (message.params as Record<string, unknown> | undefined) : undefined;
  if (params === undefined || !("task" in params)) return message;
  const { task: _ignored, ...rest } = params;
  return { ...message, params: rest } as JSONRPCMessage;
}

type Params = { _meta?: Record<string, unknown>; name?: unknown } | undefined;
const paramsOf = (message: JSONRPCMessage): Params => ("params" in message ? (message.params as Params) : undefined);

/** The client capabilities a 2026-07-28 request declares in its envelope (undefined on the 2025 revisions). */
export const clientCapabilities = (params: unknown): Record<string, unknown> | undefined => (params as Params)?._meta?.[META.capabilities] as Record<string, unknown> | undefined;

/** True for a request or notification that carries a 2026-07-28 envelope (checked by `eraOf` before any handler runs). */
export const speaksModern = (params: Params): boolean => params?._meta?.[META.revision] === MODERN_REVISION;

// Mcp-Name may carry its value as =?base64?…?= (for values a header cannot hold as they are).
function headerValue(value: string): string | undefined {
  const sentinel = value.match(/^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/);
  if (!sentinel) return value;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(atob(sentinel[1]!), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

const mismatch = (header: string, detail: string) => new RevisionRefusal(HEADER_MISMATCH, `${header}: ${detail}`, { header });

/**
 * Which era a message speaks: the body decides (a 2026-07-28 envelope in `params._meta`), the
 * `MCP-Protocol-Version` header must agree, and a 2026-07-28 request must name its method (and a
 * tool call its tool) in `Mcp-Method` and `Mcp-Name`, as the revision asks. Throws a RevisionRefusal
 * for what it refuses; a response, or a message without an envelope, is of the 2025 revisions.
 */
export function eraOf(message: JSONRPCMessage, headers: Headers): Era {
  const header = headers.get("mcp-protocol-version") ?? undefined;
  if (header !== undefined && !REVISIONS.includes(header)) {
    throw new RevisionRefusal(UNSUPPORTED_REVISION, `MCP-Protocol-Version ${header.slice(0, 40)} is not supported; this server speaks ${REVISIONS.join(", ")}.`, {
      supported: REVISIONS,
      requested: header.slice(0, 40),
    });
  }
  if (!("method" in message)) return { kind: "legacy" };
  const params = paramsOf(message);
  const claim = params?._meta?.[META.revision];
  if (claim === undefined) {
    if (header === MODERN_REVISION) {
      throw new RevisionRefusal(INVALID_PARAMS, `MCP-Protocol-Version names ${MODERN_REVISION}, whose requests carry params._meta["${META.revision}"]; this one has none.`);
    }
    return { kind: "legacy" };
  }
  if (typeof claim === "string" && LEGACY_REVISIONS.includes(claim)) {
    // A 2025 body under a 2026-07-28 header disagrees with it (a 2025 header other than the body's is the 2025 revisions' own affair).
    if (header === MODERN_REVISION) throw mismatch("MCP-Protocol-Version", `${MODERN_REVISION} disagrees with params._meta (${claim}).`);
    return { kind: "legacy" };
  }
  // A header and a body that disagree are a mismatch whichever of them names a revision this server does not speak.
  if (header !== undefined && header !== claim) throw mismatch("MCP-Protocol-Version", `${header.slice(0, 40)} disagrees with params._meta (${String(claim).slice(0, 40)}).`);
  if (claim !== MODERN_REVISION) {
    throw new RevisionRefusal(UNSUPPORTED_REVISION, `Protocol revision ${String(claim).slice(0, 40)} is not supported.`, { supported: REVISIONS, requested: claim });
  }
  if (header === undefined && "id" in message) throw mismatch("MCP-Protocol-Version", `absent, but the request names ${MODERN_REVISION} in params._meta.`);
  const capabilities = params?._meta?.[META.capabilities];
  if (typeof capabilities !== "object" || capabilities === null || Array.isArray(capabilities)) {
    throw new RevisionRefusal(INVALID_PARAMS, `params._meta["${META.capabilities}"] must be an object.`);
  }
  if (!("id" in message)) return { kind: "modern" };
  const method = headers.get("mcp-method");
  if (method === null) throw mismatch("Mcp-Method", `absent; a ${MODERN_REVISION} request names its method there.`);
  if (method !== message.method) throw mismatch("Mcp-Method", `${method.slice(0, 60)} disagrees with the body's method.`);
  if (message.method === "tools/call" && typeof params?.name === "string") {
    const name = headers.get("mcp-name");
    if (name === null) throw mismatch("Mcp-Name", "absent; a tools/call names its tool there.");
    if (headerValue(name) !== params.name) throw mismatch("Mcp-Name", "disagrees with params.name.");
  }
  // A task's requests name the task there, as a tool call names its tool (tasks/result, which the extension removed, is unknown first).
  const taskId = (params as { taskId?: unknown } | undefined)?.taskId;
  if (TASK_METHODS.has(message.method) && typeof taskId === "string") {
    const name = headers.get("mcp-name");
    if (name === null) throw mismatch("Mcp-Name", "absent; a tasks request names its task there.");
    if (headerValue(name) !== taskId) throw mismatch("Mcp-Name", "disagrees with params.taskId.");
  }
  return { kind: "modern" };
}

/** The request as the SDK's 2025 transport must see it: it knows no later revision's header, which eraOf has checked. */
export function forLegacyTransport(request: Request, era: Era): Request {
  if (era.kind === "legacy") return request;
  const headers = new Headers(request.headers);
  headers.delete("mcp-protocol-version");
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}

/** The JSON-RPC error answering a refused message (HTTP 400, as 2026-07-28 asks). */
export function refusalBody(message: JSONRPCMessage, refusal: RevisionRefusal) {
  return {
    jsonrpc: "2.0" as const,
    id: "id" in message ? message.id : null,
    error: { code: refusal.code, message: refusal.message, ...(refusal.data ? { data: refusal.data } : {}) },
  };
}

// What the server offers and its tool list change only with a deploy: a client may keep them five minutes, and share them.
const UNTIL_A_DEPLOY = { ttlMs: 300_000, cacheScope: "public" as const };

/**
 * A result as its era wants it: a 2026-07-28 result says it is complete (`resultType`), and a list
 * says how long it may be kept (`ttlMs`, `cacheScope`). A 2025 result is left as it was.
 */
export function inEra<T extends object>(params: Params, result: T, cacheable = false): T {
  if (!speaksModern(params)) return result;
  return { ...result, resultType: "complete", ...(cacheable ? UNTIL_A_DEPLOY : {}) };
}

/** `server/discover`: what this server offers, every revision it speaks and who it is. */
export function discoverResult(serverInfo: { name: string; version: string }, capabilities: object, instructions: string) {
  return {
    supportedVersions: REVISIONS,
    capabilities,
    instructions,
    resultType: "complete",
    ...UNTIL_A_DEPLOY,
    _meta: { [META.serverInfo]: serverInfo },
  };
}
