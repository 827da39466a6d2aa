import { z } from "@hono/zod-openapi";
import { ErrorCode, McpError, type ServerNotification, type ServerResult } from "@modelcontextprotocol/sdk/types.js";
import { version } from "../../package.json";
import type { Modes } from "./elicitation";
import type { Methods } from "./methods";
import { discoverResult, LEGACY_REVISIONS, speaksModern } from "./revision";
import type { Sealer } from "./sealing";
import { sessionFor } from "./session-elicitation";
import { TASKS_EXTENSION } from "./tasks";

const [LATEST, OLDEST] = [LEGACY_REVISIONS[0]!, LEGACY_REVISIONS.at(-1)!];

const SERVER_INFO = { name: "project-chat", version };
const CAPABILITIES = { tools: { listChanged: false } };
// What server/discover declares while task handles can be sealed (MCP_STATE_KEY is set).
const WITH_TASKS = { ...CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } };
const INSTRUCTIONS =
  "Project chat: each project has chats, and each chat has an AI agent that works on the messages sent to it, one task at a time, asynchronously. " +
  "Start with list_projects: every other tool needs one of its project ids. Sending (send_message) answers at once with a submission; the reply " +
  "arrives later: pass waitSeconds to wait for it, or follow up with get_submission and read_messages. A tool error's text is a JSON problem whose " +
  "code says what went wrong (forbidden: your role only reads; not_found: no such project or chat for you; invalid_request: the named arguments).";

/** The 2025 revision an `initialize` gets: the one it asks for; an older one gets the oldest, a later one (2026-07-28 has no initialize) the newest. */
const negotiateVersion = (requested: string) => (LEGACY_REVISIONS.includes(requested) ? requested : requested < OLDEST ? OLDEST : LATEST);

/** What the channels of this section need: the sealer (undefined: MCP_STATE_KEY unset, none offered) and the principal, the credential. */
export type NativeChannels = { sealer: Sealer | undefined; principal: string; sessionModes: Modes };

// 2026-07-28's channel for notifications outside a request; the service sends none (tools never change).
const ListenRequest = z.object({
  method: z.literal("subscriptions/listen"),
  params: z.looseObject({ notifications: z.record(z.string(), z.unknown()).default({}) }).default({ notifications: {} }),
});

// The SDK's InitializeRequestSchema would fail missing or ill-typed params as an internal error (-32603) with the parser's dump.
const InitializeRequest = z.object({ method: z.literal("initialize"), params: z.unknown().optional() });
const InitializeParams = z.object({
  protocolVersion: z.string(),
  capabilities: z.looseObject({}),
  clientInfo: z.looseObject({ name: z.string(), version: z.string() }),
});

/** initialize's params as the revisions require them, or invalid params (-32602) naming the first field that is missing or of the wrong type. */
function initializeParams(params: unknown): z.output<typeof InitializeParams> {
  const parsed = InitializeParams.safeParse(params);
  if (parsed.success) return parsed.data;
  const [first] = parsed.error.issues;
  const field = ["params", ...(first?.path ?? [])].join(".");
  throw new McpError(ErrorCode.InvalidParams, `initialize: ${field} ${params === undefined ? "is missing" : `is invalid: ${first?.message ?? "wrong type"}`}.`);
}

// 2026-07-28's own request: what the server offers, asked without any initialize.
const DiscoverRequest = z.object({ method: z.literal("server/discover"), params: z.looseObject({}).optional() });

/**
 * The handshake of every revision, apart from the tools: initialize (2025; a 2026-07-28 request gets -32601 for it),
 * server/discover and subscriptions/listen. `setSession`: the Mcp-Session-Id an initialize answers, when it makes one.
 */
export function answerHandshake(methods: Methods, native: NativeChannels, setSession: (sessionId: string | undefined) => void): void {
  methods.on("initialize", InitializeRequest, async (request) => {
    // 2026-07-28 has no initialize: it answers it as any method it does not know.
    if (speaksModern(request.params as { _meta?: Record<string, unknown> }))
      throw new McpError(ErrorCode.MethodNotFound, "Method not found: 2026-07-28 has no initialize; ask server/discover.");
    const params = initializeParams(request.params);
    const protocolVersion = negotiateVersion(params.protocolVersion);
    if (native.sealer) setSession(await sessionFor(native.sealer, native.principal, protocolVersion, params.capabilities));
    return {
      protocolVersion,
      capabilities: CAPABILITIES,
      serverInfo: SERVER_INFO,
      instructions: INSTRUCTIONS,
    };
  });
  methods.on("server/discover", DiscoverRequest, () => discoverResult(SERVER_INFO, native.sealer ? WITH_TASKS : CAPABILITIES, INSTRUCTIONS) as unknown as ServerResult);
  // Task notifications are not part of this release: a listen is acknowledged with nothing (taskIds: []) and ends at once.
  methods.on("subscriptions/listen", ListenRequest, async (request, extra) => {
    const { taskIds: _asked, ...filter } = request.params.notifications;
    const _meta = { "io.modelcontextprotocol/subscriptionId": extra.requestId };
    await extra.sendNotification({
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { ...Object.fromEntries(Object.keys(filter).map((name) => [name, Array.isArray(filter[name]) ? [] : false])), taskIds: [] },
        _meta,
      },
    } as unknown as ServerNotification);
    return { resultType: "complete", _meta } as unknown as ServerResult;
  });
}
