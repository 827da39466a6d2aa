import { z } from "@hono/zod-openapi";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  type Tool as ToolListing,
} from "@modelcontextprotocol/sdk/types.js";
import { version } from "../../package.json";
import { type ApiError, fieldProblems, invalidRequest, toApiError } from "../http/problem";
import { log } from "../log";
import { firstCharacters } from "../text";
import { toolJsonSchema } from "./json-schema";
import { ownSubmission } from "./chain-view";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { ChatFollower } from "../channels/chat-follower";
import { type Modes, modesOf } from "./elicitation";
import { sessionFor, waitAsking } from "./session-elicitation";
import { afterSend, type ElicitingCall, type ElicitingResult, invalidState, retry } from "./input-required";
import { WAITING_TOOLS } from "./live-answer";
import { clientCapabilities, discoverResult, inEra, LEGACY_REVISIONS, speaksModern } from "./revision";
import type { Sealer } from "./sealing";
import { declaresTasks, extensionRequired, RpcError, TASKS_EXTENSION, TaskChannel } from "./tasks";
import { problemResult, type Tool, type ToolContext } from "./tool-context";
import { TOOLS, toolNamed } from "./tools";
import type { ChatService, Served } from "../chats/service/chat-service";

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

// Listed once per isolate: the schemas do not change while it runs.
let listing: ToolListing[] | undefined;
const toolListing = () =>
  (listing ??= TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: toolJsonSchema(t.input, "input"),
    outputSchema: toolJsonSchema(t.output, "output"),
    annotations: { title: t.title, ...t.annotations },
  })));

// The SDK's own CallToolRequestSchema would fail a non-object `arguments` as an internal error (-32603); the contract wants invalid params (-32602).
const ToolCallRequest = z.object({
  method: z.literal("tools/call"),
  params: z.looseObject({ name: z.unknown(), arguments: z.unknown() }).default({ name: undefined, arguments: undefined }),
});

// 2026-07-28's own request: what the server offers, asked without any initialize.
const DiscoverRequest = z.object({ method: z.literal("server/discover"), params: z.looseObject({}).optional() });

// The Tasks extension's requests: each names its task by the handle the call answered.
const taskRequest = <M extends string>(method: M) =>
  z.object({ method: z.literal(method), params: z.looseObject({ taskId: z.unknown().optional(), inputResponses: z.unknown().optional() }).default({}) });
const TaskGet = taskRequest("tasks/get");
const TaskUpdate = taskRequest("tasks/update");
const TaskCancel = taskRequest("tasks/cancel");

/** What the channels of this section need: the sealer (undefined: MCP_STATE_KEY unset, none offered) and the principal, the credential. */
export type NativeChannels = { sealer: Sealer | undefined; principal: string; sessionModes: Modes };

/** The elicitation modes a 2026-07-28 request's client capabilities declare. */
const requestModes = (params: unknown) => modesOf(clientCapabilities(params));

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

/**
 * One MCP server per HTTP request (the endpoint is stateless), on the SDK's Protocol: it frames
 * JSON-RPC, cancellation and progress. The SDK's Server adds only what this one does not use
 * (client requests, logging, elicitation), at the price of bundling Ajv (about 43 KB of gzip,
 * constructed even when unused); its tool answers are
 * shaped here, as the contract fixes them.
 */
export class ToolServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  /** The Mcp-Session-Id an initialize answers (2025 revisions, a client that declared elicitation). */
  sessionId: string | undefined;

  constructor(
    private readonly chats: ChatService,
    private readonly requestId: string,
    private readonly hangUp: AbortSignal,
    private readonly waitUntil: (work: Promise<unknown>) => void,
    private readonly native: NativeChannels,
  ) {
    super();
    this.setRequestHandler(InitializeRequest, async (request) => {
      // 2026-07-28 has no initialize: it answers it as any method it does not know.
      if (speaksModern(request.params as { _meta?: Record<string, unknown> }))
        throw new McpError(ErrorCode.MethodNotFound, "Method not found: 2026-07-28 has no initialize; ask server/discover.");
      const params = initializeParams(request.params);
      const protocolVersion = negotiateVersion(params.protocolVersion);
      if (native.sealer) this.sessionId = await sessionFor(native.sealer, native.principal, protocolVersion, params.capabilities);
      return {
        protocolVersion,
        capabilities: CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: INSTRUCTIONS,
      };
    });
    this.setRequestHandler(DiscoverRequest, () => discoverResult(SERVER_INFO, native.sealer ? WITH_TASKS : CAPABILITIES, INSTRUCTIONS) as unknown as ServerResult);
    // Task notifications are not part of this release: a listen is acknowledged with nothing (taskIds: []) and ends at once.
    this.setRequestHandler(ListenRequest, async (request, extra) => {
      const { taskIds: _asked, ...filter } = request.params.notifications;
      await extra.sendNotification({
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { ...Object.fromEntries(Object.keys(filter).map((name) => [name, Array.isArray(filter[name]) ? [] : false])), taskIds: [] } },
      } as unknown as ServerNotification);
      return { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": extra.requestId } } as unknown as ServerResult;
    });
    this.setRequestHandler(TaskGet, (request) => this.tasks(request.params).get(request.params.taskId, requestModes(request.params)) as Promise<ServerResult>);
    this.setRequestHandler(TaskUpdate, (request) => this.tasks(request.params).update(request.params.taskId, request.params.inputResponses) as Promise<ServerResult>);
    this.setRequestHandler(TaskCancel, (request) => this.tasks(request.params).cancel(request.params.taskId) as Promise<ServerResult>);
    this.setRequestHandler(ListToolsRequestSchema, (request) => inEra(request.params, { tools: toolListing() }, true));
    this.setRequestHandler(ToolCallRequest, async (request, extra) => {
      const result = await this.callTool(request.params, extra);
      return "resultType" in result ? (result as ServerResult) : inEra(request.params, result);
    });
  }

  /** The task channel for a tasks/* request: only while handles can be sealed, and only to a request that declared the extension. */
  private tasks(params: unknown): TaskChannel {
    const { sealer, principal } = this.native;
    if (!sealer) throw new McpError(ErrorCode.MethodNotFound, "Method not found: this server offers no tasks.");
    if (!declaresTasks(params)) throw extensionRequired();
    return new TaskChannel(sealer, principal, this.chats);
  }

  private async callTool(params: { name: unknown; arguments?: unknown } & Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult | TaskCreated | ElicitingResult> {
    const { name, arguments: args = {} } = params;
    const tool = typeof name === "string" ? toolNamed(name) : undefined;
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `There is no tool named ${JSON.stringify(firstCharacters(String(name), 100))}; tools/list names them.`);
    if (typeof args !== "object" || args === null || Array.isArray(args)) throw new McpError(ErrorCode.InvalidParams, "The tool's arguments must be a JSON object.");
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const { errors } = fieldProblems(parsed.error, "arguments");
      return this.problem(invalidRequest(`The arguments of ${tool.name} are invalid; see errors for each field.`, errors));
    }
    const token = extra._meta?.progressToken;
    const progress =
      token === undefined
        ? null
        : (update: { progress: number; message: string }) => extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, ...update } });
    let answer: Served<unknown>;
    try {
      const context: ToolContext = { chats: this.chats, requestId: this.requestId, signal: AbortSignal.any([extra.signal, this.hangUp]), progress };
      const eliciting = this.elicitingCall(tool.name, params, parsed.data);
      if (eliciting) return await this.elicit(tool, eliciting, params, parsed.data, context, extra.requestId);
      // A retry that cannot be verified here (no key to open it, or it now declares tasks) sends nothing, never the message again.
      if (params.requestState !== undefined && WAITING_TOOLS.has(tool.name)) throw invalidState();
      const asTask = this.native.sealer !== undefined && WAITING_TOOLS.has(tool.name) && declaresTasks(params);
      const running = tool.run(parsed.data, { ...context, asTask });
      if (asTask) {
        // Stored, so a tasks/get for it resolves at once; a refusal is not a task but the same tool error as ever.
        const sent = await running;
        if (!sent.ok) return this.problem(sent.problem);
        const { projectId, chatId } = parsed.data as { projectId: string; chatId: string };
        const channel = new TaskChannel(this.native.sealer!, this.native.principal, this.chats);
        return await channel.create({ projectId, chatId }, ownSubmission(sent), requestModes(params), tool.name);
      }
      // A client that hangs up ends the wait, not the work: what a tool started completes.
      this.waitUntil(running.catch(() => undefined));
      answer = await running;
    } catch (error) {
      // A refused requestState is the request's own error (-32602), not the tool's.
      if (error instanceof RpcError) throw error;
      log.error("mcp_tool_failed", { requestId: this.requestId, tool: tool.name }, error);
      return this.problem(toApiError(error));
    }
    if (!answer.ok) return this.problem(answer.problem);
    const structured = answer.body as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  }

  /**
   * A call that qualifies for MRTR (2026-07-28): send_message or answer_question with waitSeconds above 0, from a
   * client that declared elicitation and not the Tasks extension, while MCP_STATE_KEY is set.
   */
  private elicitingCall(toolName: string, params: Record<string, unknown>, args: unknown): (ElicitingCall & { session?: boolean }) | undefined {
    const { sealer, principal } = this.native;
    const { waitSeconds = 0 } = args as { waitSeconds?: number };
    const modes = requestModes(params);
    if (!sealer || !WAITING_TOOLS.has(toolName) || declaresTasks(params)) return undefined;
    const toolArgs = (params.arguments ?? {}) as Record<string, unknown>;
    // The 2025 revisions: the session's modes, sealed at initialize.
    if (!speaksModern(params)) {
      const { sessionModes } = this.native;
      if (waitSeconds <= 0 || (!sessionModes.form && !sessionModes.url)) return undefined;
      return { sealer, principal, tool: toolName, args: toolArgs, modes: sessionModes, waitMs: waitSeconds * 1000, session: true };
    }
    if (params.requestState === undefined && (waitSeconds <= 0 || (!modes.form && !modes.url))) return undefined;
    return { sealer, principal, tool: toolName, args: toolArgs, modes, waitMs: waitSeconds * 1000 };
  }

  /** The first call sends (after taking its stream place) and waits on its chain; a retry with a requestState answers and waits again. */
  private async elicit(
    tool: Tool,
    call: ElicitingCall & { session?: boolean },
    params: Record<string, unknown>,
    args: unknown,
    context: ToolContext,
    requestId: RequestId,
  ): Promise<CallToolResult | ElicitingResult> {
    if (params.requestState !== undefined) return retry(call, params.requestState, params.inputResponses, context);
    const { projectId, chatId } = args as { projectId: string; chatId: string };
    const following = await ChatFollower.open(context.chats, { projectId, chatId });
    if (!following.ok) return this.problem(following.problem);
    const sent = await tool.run(args, { ...context, asTask: true }).catch((error: unknown) => {
      following.body.close();
      throw error;
    });
    if (!sent.ok) {
      following.body.close();
      return this.problem(sent.problem);
    }
    const ref = { projectId, chatId, own: ownSubmission(sent) };
    if (!call.session) return afterSend(call, ref, following.body, context);
    return waitAsking(call, ref, following.body, context, (request) => this.transport?.send(request, { relatedRequestId: requestId }));
  }

  /** The problem+json body /v1 would send, as the one text item of an error result (no structuredContent: the output schema describes success). */
  private problem(error: ApiError): CallToolResult {
    return problemResult(error, this.requestId);
  }

  // This server sends no requests of its own and runs nothing as a task; notifications are progress only.
  protected assertCapabilityForMethod(method: string): void {
    throw new Error(`This server does not send ${method} requests.`);
  }
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(method: string): void {
    throw new Error(`This server does not send ${method} requests as tasks.`);
  }
  protected assertTaskHandlerCapability(): void {
    throw new McpError(ErrorCode.InvalidRequest, "This server does not run requests as tasks.");
  }
}

type TaskCreated = Awaited<ReturnType<TaskChannel["create"]>>;

type ToolExtra = {
  requestId: RequestId;
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(notification: ServerNotification): Promise<void>;
};
