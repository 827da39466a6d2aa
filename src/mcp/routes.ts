import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { cors } from "hono/cors";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { GatedEnv } from "../auth/gate";
import { config } from "../config";
import { jsonBodyGuard } from "../http/json-body";
import { limitBody, MiB } from "../http/middleware";
import { ApiError, invalidRequest } from "../http/problem";
import { createRouter } from "../http/router";
import { resourceCredentials } from "../oauth/resource-credentials";
import { liveEventStream, liveJsonAnswer } from "../channels/live-answer";
import { callShape } from "./live-answer";
import { type Era, eraOf, forLegacyTransport, RevisionRefusal, refusalBody, unknownToModern, withoutLegacyTask } from "./revision";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { firstCharacters } from "../text";
import { NO_MODES } from "./elicitation";
import { Sealer } from "./sealing";
import { isResponse, sessionModes as sealedSessionModes, type TellRefusal, takeResponse } from "./session-elicitation";
import { isJsonRpcMessage } from "./message";
import { ToolServer } from "./server";
import { StreamServer } from "./stream-server";
import { chatService } from "../chats/service/chat-service";

const ALLOW = "POST";
const mcpCredentials = resourceCredentials("mcp");

// CORS for the APP_ORIGINS pages that may call (Hono's), answering their preflight with what they may send.
const appCors = cors({
  origin: (origin, c) => (config(c.env).appOrigins.includes(origin) ? origin : null),
  allowMethods: [ALLOW],
  allowHeaders: ["authorization", "content-type", "accept", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "last-event-id"],
  exposeHeaders: ["www-authenticate", "retry-after", "ratelimit", "ratelimit-policy", "x-request-id", "mcp-session-id"],
  maxAge: 600,
});

/**
 * A request from a browser page of another site is refused (DNS rebinding), its preflight included: Hono's CORS would
 * only leave its headers out. One with no Origin (any non-browser client) is not a browser's.
 */
const sameSiteOrigins = createMiddleware<GatedEnv>(async (c, next) => {
  const origin = c.req.header("origin");
  if (origin === undefined && c.req.method !== "OPTIONS") {
    // CORS headers are for a browser, which always sends Origin: without one, only Vary (about 0.05 ms of each call otherwise).
    await next();
    // On the answer itself: Hono's c.header after the handler would copy the whole Response to add one header.
    c.res.headers.append("vary", "Origin");
    return;
  }
  if (origin !== undefined && !config(c.env).appOrigins.includes(origin)) throw new ApiError(403, "forbidden", "Requests from this Origin are not accepted on /mcp.");
  return appCors(c, next);
});

/**
 * What the SDK's transport would refuse before any message is understood, refused here first as
 * problem+json like every other 4xx: an Accept without both answer types (406), a body that is not
 * JSON (400, as on /v1).
 */
const transportChecks = createMiddleware<GatedEnv>(async (c, next) => {
  // Streamable HTTP: the client lists both, since a call may be answered either way.
  const accept = c.req.header("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    throw new ApiError(406, "invalid_request", "Send Accept: application/json, text/event-stream; a call may be answered with either.", {
      errors: [{ path: "accept", message: "must list application/json and text/event-stream" }],
    });
  }
  if (!isJsonContentType(c.req.header("content-type"))) {
    throw invalidRequest("Send the JSON-RPC message with Content-Type: application/json.", [{ path: "content-type", message: "not application/json" }]);
  }
  await next();
});

/** One JSON-RPC message as JSON: an object (a batch, an array, is not part of the revisions served here). */
async function oneMessage(c: Context<GatedEnv>): Promise<JSONRPCMessage> {
  let message: unknown;
  try {
    // The text jsonBodyGuard decoded, from Hono's body cache.
    message = JSON.parse(await c.req.text());
  } catch {
    throw invalidRequest("The request body is not JSON.", [{ path: "(body)", message: "not JSON" }]);
  }
  if (Array.isArray(message)) throw invalidRequest("Send one JSON-RPC message per request; batches are not supported.", [{ path: "(body)", message: "an array" }]);
  if (typeof message !== "object" || message === null)
    throw invalidRequest("The body must be one JSON-RPC message, a JSON object.", [{ path: "(body)", message: "not an object" }]);
  if (!isJsonRpcMessage(message as Record<string, unknown>)) {
    throw invalidRequest("The body is not a JSON-RPC 2.0 request, notification or response.", [
      { path: "(body)", message: 'needs jsonrpc "2.0" and a method (with params an object, when present) or an id with a result or error' },
    ]);
  }
  // The message as sent: the schema would drop members a handler may still read.
  return message as JSONRPCMessage;
}

/**
 * /mcp: the Model Context Protocol over Streamable HTTP, stateless. The credential (a personal API
 * token, or an OAuth access token) is checked and counted before any message is read, as on /v1;
 * tools then call the chat service, as /v1's routes do.
 */
export function createMcpRoutes() {
  const mcp = createRouter<GatedEnv>();
  // A browser client's preflight, for the origins that may call: answered by the CORS middleware.
  mcp.options("/", sameSiteOrigins);
  // No session, so no stream to GET and nothing to DELETE; the credentials come first, so a client that
  // probes with GET learns where OAuth starts (401 with resource_metadata) before it learns the method.
  mcp.on(["GET", "HEAD", "DELETE", "PUT", "PATCH"], "/", sameSiteOrigins, mcpCredentials, () => {
    throw new ApiError(405, "method_not_allowed", "This MCP endpoint is stateless: send each JSON-RPC message with POST.", { headers: { allow: `${ALLOW}, OPTIONS` } });
  });
  mcp.post("/", sameSiteOrigins, limitBody(MiB), mcpCredentials, transportChecks, jsonBodyGuard, async (c) => {
    const message = withoutLegacyTask(await oneMessage(c));
    let era: Era;
    try {
      era = eraOf(message, c.req.raw.headers);
    } catch (error) {
      if (error instanceof RevisionRefusal) return c.json(refusalBody(message, error), 400);
      throw error;
    }
    const state = config(c.env).mcpState;
    if (unknownToModern(message, era, state !== undefined)) {
      const { method, id } = message as { method: string; id: string | number };
      return c.json({ jsonrpc: "2.0", id, error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${firstCharacters(method, 100)}` } }, 404);
    }
    const sealer = state ? new Sealer(state) : undefined;
    const principal = c.get("caller").gateName;
    const chats = chatService(c);
    // A response to an elicitation/create this server sent (2025): its effect lands in the chat, whichever isolate waits.
    if (isResponse(message)) {
      const tell: TellRefusal = ({ projectId, chatId, questionId }, problem) => c.env.CHAT_ROOM.getByName(chatId).tellAnswerRefused(projectId, questionId, principal, problem);
      if (!sealer || !(await takeResponse(sealer, principal, message, chats, tell))) {
        throw invalidRequest("This is not a response to a request this server sent you.", [{ path: "id", message: "unknown, another credential's, or expired" }]);
      }
      return c.body(null, 202);
    }
    const sessionModes = sealer && era.kind === "legacy" ? await sealedSessionModes(sealer, principal, c.req.header("mcp-session-id") ?? null) : NO_MODES;
    const server = new ToolServer(chats, c.get("requestId"), (work) => c.executionCtx.waitUntil(work), { sealer, principal, sessionModes });
    // A call that may send progress (or, in an eliciting session, a question) answers as an event stream; everything else as one JSON body.
    const shape = callShape(message, sealer !== undefined, sessionModes.form || sessionModes.url);
    // A call that waits is kept alive like a chat's stream, so its hang-up is noticed whatever the platform tells.
    if (shape.progress || shape.wait) {
      const hangUp = new AbortController();
      const signal = AbortSignal.any([c.req.raw.signal, hangUp.signal]);
      if (!shape.progress) return liveJsonAnswer(server.methods.answer(message, signal), hangUp);
      const transport = new WebStandardStreamableHTTPServerTransport();
      await new StreamServer(server.methods, signal).connect(transport);
      return liveEventStream(await transport.handleRequest(forLegacyTransport(c.req.raw, era), { parsedBody: message }), hangUp);
    }
    // The request's own signal (enable_request_signal) fires when the client goes away, also while a JSON answer is still being made.
    const answered = await server.methods.answer(message, c.req.raw.signal);
    // An initialize from a client that declared elicitation: its modes, sealed, come back with every request.
    if (server.sessionId) answered.headers.set("mcp-session-id", server.sessionId);
    return answered;
  });
  return mcp;
}
