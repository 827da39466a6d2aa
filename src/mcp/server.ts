import { z } from "@hono/zod-openapi";
import {
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  type ServerResult,
  type Tool as ToolListing,
} from "@modelcontextprotocol/sdk/types.js";
import { type ApiError, fieldProblems, invalidRequest, toApiError } from "../http/problem";
import { log } from "../log";
import { firstCharacters } from "../text";
import { toolJsonSchema } from "./json-schema";
import { ownSubmission } from "./chain-view";
import { ChatFollower } from "../channels/chat-follower";
import { modesOf } from "./elicitation";
import { answerHandshake, type NativeChannels } from "./handshake";
import { waitAsking } from "./session-elicitation";
import { afterSend, type ElicitingCall, type ElicitingResult, invalidState, retry } from "./input-required";
import { WAITING_TOOLS } from "./live-answer";
import { clientCapabilities, inEra, speaksModern } from "./revision";
import { declaresTasks, extensionRequired, RpcError, TaskChannel } from "./tasks";
import { problemResult, type Tool, type ToolContext } from "./tool-context";
import { TOOLS, toolNamed } from "./tools";
import type { ChatService, Served } from "../chats/service/chat-service";
import { type CallExtra, Methods } from "./methods";

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

// Read as sent, not by the SDK's CallToolRequestSchema: that fails a non-object `arguments` as an internal error (-32603); the contract wants invalid params (-32602).
type ToolCallParams = { name?: unknown; arguments?: unknown } & Record<string, unknown>;

// The Tasks extension's requests: each names its task by the handle the call answered.
const taskRequest = <M extends string>(method: M) =>
  z.object({ method: z.literal(method), params: z.looseObject({ taskId: z.unknown().optional(), inputResponses: z.unknown().optional() }).default({}) });
const TaskGet = taskRequest("tasks/get");
const TaskUpdate = taskRequest("tasks/update");
const TaskCancel = taskRequest("tasks/cancel");

/** The elicitation modes a 2026-07-28 request's client capabilities declare. */
const requestModes = (params: unknown) => modesOf(clientCapabilities(params));

/**
 * The methods this MCP server answers for one HTTP request (the endpoint is stateless): the handshake, tools/list,
 * tools/call and the Tasks extension's requests, in one table that answers a call with one JSON body or goes onto the
 * SDK's Protocol for a call answered as an event stream. Tool answers are shaped here, as the contract fixes them.
 */
export class ToolServer {
  readonly methods = new Methods();
  /** The Mcp-Session-Id an initialize answers (2025 revisions, a client that declared elicitation). */
  sessionId: string | undefined;

  constructor(
    private readonly chats: ChatService,
    private readonly requestId: string,
    private readonly waitUntil: (work: Promise<unknown>) => void,
    private readonly native: NativeChannels,
  ) {
    const { methods } = this;
    answerHandshake(methods, native, (sessionId) => {
      this.sessionId = sessionId;
    });
    methods.on("ping", PingRequestSchema, () => ({}));
    methods.on("tasks/get", TaskGet, (request) => this.tasks(request.params).get(request.params.taskId, requestModes(request.params)) as Promise<ServerResult>);
    methods.on("tasks/update", TaskUpdate, (request) => this.tasks(request.params).update(request.params.taskId, request.params.inputResponses) as Promise<ServerResult>);
    methods.on("tasks/cancel", TaskCancel, (request) => this.tasks(request.params).cancel(request.params.taskId) as Promise<ServerResult>);
    methods.on("tools/list", ListToolsRequestSchema, (request) => inEra(request.params, { tools: toolListing() }, true));
    methods.onRequest("tools/call", async (request, extra) => {
      const params = (request.params ?? {}) as ToolCallParams;
      const result = await this.callTool(params, extra);
      return "resultType" in result ? (result as ServerResult) : inEra(params, result);
    });
  }

  /** The task channel for a tasks/* request: only while handles can be sealed, and only to a request that declared the extension. */
  private tasks(params: unknown): TaskChannel {
    const { sealer, principal } = this.native;
    if (!sealer) throw new McpError(ErrorCode.MethodNotFound, "Method not found: this server offers no tasks.");
    if (!declaresTasks(params)) throw extensionRequired();
    return new TaskChannel(sealer, principal, this.chats);
  }

  private async callTool(params: ToolCallParams, extra: CallExtra): Promise<CallToolResult | TaskCreated | ElicitingResult> {
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
      const context: ToolContext = { chats: this.chats, requestId: this.requestId, signal: extra.signal, progress };
      const eliciting = this.elicitingCall(tool.name, params, parsed.data);
      if (eliciting) return await this.elicit(tool, eliciting, params, parsed.data, context, extra.sendRequest);
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
    if (!sealer || !WAITING_TOOLS.has(toolName) || declaresTasks(params)) return undefined;
    const modes = requestModes(params);
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
    sendRequest: CallExtra["sendRequest"],
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
    return waitAsking(call, ref, following.body, context, sendRequest);
  }

  /** The problem+json body /v1 would send, as the one text item of an error result (no structuredContent: the output schema describes success). */
  private problem(error: ApiError): CallToolResult {
    return problemResult(error, this.requestId);
  }
}

type TaskCreated = Awaited<ReturnType<TaskChannel["create"]>>;
