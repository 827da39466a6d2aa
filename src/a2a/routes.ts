import { JsonRpcTransportHandler } from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { restStatusFor, toRestErrorBody, VersionNotSupportedError } from "@a2a-js/sdk/errors";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { GatedEnv } from "../auth/gate";
import type { Scope } from "../auth/scopes";
import { config } from "../config";
import type { AppEnv } from "../env";
import { matchesIfNoneMatch, strongEtag } from "../http/etag";
import { limitBody, MiB } from "../http/middleware";
import { ApiError, notFound } from "../http/problem";
import { createRouter } from "../http/router";
import { resourceCredentials } from "../oauth/resource-credentials";
import { agentRequest, blockingAnswer, eventStream, refusedParams, projectIdOf, requestedVersion, requireJsonBody, resumePoint } from "./agent-request";
import { agentCard, legacyAgentCard, unversionedAgentCard } from "./card";
import { extraDetailsOf, malformed } from "./errors";
import { createRestRoutes } from "./rest-routes";
import { canPush } from "./push-configs";
import { eventIdOf } from "./task-feed";

const CARD_CACHE = "public, max-age=300";
const unsupportedVersion = (version: string) => new VersionNotSupportedError({ message: `A2A-Version ${version.slice(0, 20)} is not spoken here: 1.0 and 0.3 are.` });

/** Each method's 1.0 name, its v0.3 name and the scope it needs; a name not here is unknown (-32601, before any scope). */
const METHODS: [string, string, Scope][] = [
  ["SendMessage", "message/send", "chat:write"],
  ["SendStreamingMessage", "message/stream", "chat:write"],
  ["CancelTask", "tasks/cancel", "chat:write"],
  ["CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set", "chat:write"],
  ["DeleteTaskPushNotificationConfig", "tasks/pushNotificationConfig/delete", "chat:write"],
  ["GetTask", "tasks/get", "chat:read"],
  ["ListTasks", "(none in v0.3)", "chat:read"],
  ["SubscribeToTask", "tasks/resubscribe", "chat:read"],
  ["GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get", "chat:read"],
  ["ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list", "chat:read"],
  ["GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard", "chat:read"],
];
const SCOPES = { modern: new Map(METHODS.map(([name, , scope]) => [name, scope])), legacy: new Map(METHODS.map(([, name, scope]) => [name, scope])) };
const STREAMING = new Set(["SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"]);
const BLOCKING = new Set(["SendMessage", "message/send"]);

/** Without PUBLIC_URL there is no agent to describe or reach: every /a2a path is 404. */
const requirePublicUrl = createMiddleware<AppEnv>(async (c, next) => {
  if (!config(c.env).publicOrigin) throw notFound("A2A is not set up on this deployment (PUBLIC_URL is unset).");
  await next();
});

/** The agent card: public, the same for any project id, cacheable and validated by its bytes. */
async function serveCard(c: Context<AppEnv>): Promise<Response> {
  const projectId = projectIdOf(c);
  const origin = config(c.env).publicOrigin!;
  const version = requestedVersion(c);
  const headers: Record<string, string> = { "cache-control": CARD_CACHE, vary: "A2A-Version", "access-control-allow-origin": "*" };
  if (version !== undefined && version !== "1.0" && version !== "0.3") {
    const error = unsupportedVersion(version);
    return c.json(toRestErrorBody(error, restStatusFor(error)), 400, headers);
  }
  const push = canPush(c.env);
  const card = version === "1.0" ? agentCard : version === "0.3" ? legacyAgentCard : unversionedAgentCard;
  const body = JSON.stringify(card(origin, projectId, push));
  const etag = await strongEtag(body);
  headers.etag = etag;
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
  return c.body(body, 200, { ...headers, "content-type": "application/json" });
}

type JsonRpcResponse = { jsonrpc: "2.0"; id: string | number | null; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** A JSON-RPC error answer with its further details: the fields it is about, the /v1 code behind it. */
function withDetails(response: JsonRpcResponse, error: unknown): JsonRpcResponse {
  const extra = extraDetailsOf(error);
  // 1.0 errors carry a list of details; v0.3's data is the SDK's own object, left as it is.
  if (!response.error || extra.length === 0 || !(Array.isArray(response.error.data) || response.error.data === undefined)) return response;
  return { ...response, error: { ...response.error, data: [...((response.error.data as unknown[] | undefined) ?? []), ...extra] } };
}

/**
 * /a2a/projects/{projectId}: every project's agent over A2A. The card is public; JSON-RPC (1.0, and v0.3 through the
 * SDK's compat handler) takes a personal API token or an OAuth grant for /a2a, counted like any other request.
 */
export function createA2aRoutes() {
  const a2a = createRouter<GatedEnv>();
  a2a.use("*", requirePublicUrl);
  // The card, also at agent.json (its name before v0.3, which some clients still ask for by default).
  for (const card of ["agent-card.json", "agent.json"]) {
    a2a.on(["GET", "HEAD"], `/:projectId/.well-known/${card}`, serveCard);
    a2a.options(`/:projectId/.well-known/${card}`, (c) =>
      c.body(null, 204, {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, HEAD",
        "access-control-allow-headers": "a2a-version, if-none-match",
        "access-control-max-age": "86400",
      }),
    );
  }
  const credentials = resourceCredentials("a2a");
  for (const path of ["/:projectId", "/:projectId/"]) {
    // Credentials first (a request is counted whatever its body), then the body's size.
    a2a.post(path, credentials, limitBody(MiB), (c) => jsonRpc(c));
  }
  a2a.route("/:projectId/rest", createRestRoutes(credentials));
  return a2a;
}

async function jsonRpc(c: Context<GatedEnv>): Promise<Response> {
  projectIdOf(c);
  requireJsonBody(c);
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return c.json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "The body is not JSON." } });
  }
  const request = (typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}) as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  const idValid = request.id === undefined || request.id === null || typeof request.id === "string" || Number.isInteger(request.id);
  if (body !== request || request.jsonrpc !== "2.0" || typeof request.method !== "string" || !idValid) {
    return c.json({ jsonrpc: "2.0", id: idValid ? (request.id ?? null) : null, error: { code: -32600, message: "Send one JSON-RPC 2.0 request object." } });
  }
  const id = (request.id ?? null) as string | number | null;
  // A method no version has is unknown before the version is looked at.
  if (!SCOPES.modern.has(request.method) && !SCOPES.legacy.has(request.method)) {
    return c.json({ jsonrpc: "2.0", id, error: { code: -32601, message: `No method ${request.method.slice(0, 60)} here.` } });
  }
  const version = requestedVersion(c);
  const legacy = version === undefined || version === "0.3";
  if (!legacy && version !== "1.0") {
    return c.json({
      jsonrpc: "2.0",
      id,
      error: {
        ...JsonRpcTransportHandler.mapToJSONRPCError(unsupportedVersion(version)),
      },
    });
  }
  const method = typeof request.method === "string" ? request.method : "";
  const scope = (legacy ? SCOPES.legacy : SCOPES.modern).get(method);
  if (scope && !c.get("caller").scopes.includes(scope)) {
    throw new ApiError(403, "insufficient_scope", `This method needs a token with the ${scope} scope.`, {
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}"` },
    });
  }
  const resume = resumePoint(c);
  if (resume === "bad") return c.json({ jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(malformed("Last-Event-ID must be a non-negative integer.")) });
  const streaming = STREAMING.has(method);
  const blocking = BLOCKING.has(method);
  const { agent, errors, context, headers, hangUp, refusal } = agentRequest(c, resume, version ?? "0.3", streaming || blocking);
  const transport = legacy ? new LegacyJsonRpcTransportHandler(agent) : new JsonRpcTransportHandler(agent);
  const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const errorAnswer = (error: unknown): JsonRpcResponse => withDetails({ jsonrpc: "2.0", id, error: mapError(error) }, error);
  const refused = refusedParams((request as { params?: unknown }).params);
  if (refused) return c.json(errorAnswer(refused), 200, headers);
  if (streaming) {
    const answer = (await transport.handle(request as Record<string, unknown>, context)) as JsonRpcResponse | AsyncGenerator<JsonRpcResponse>;
    if (!(Symbol.asyncIterator in answer)) return refusal() ?? c.json(withDetails(answer, errors[0]), 200, headers);
    const frame = (event: JsonRpcResponse) => {
      const eventId = eventIdOf(event.result);
      return `${eventId === undefined ? "" : `id: ${eventId}\n`}data: ${JSON.stringify(event)}\n\n`;
    };
    return eventStream(
      answer[Symbol.asyncIterator](),
      { event: frame, error: (error: unknown) => frame(errorAnswer(error)) },
      (error: unknown) => refusal() ?? c.json(errorAnswer(error), 200, headers),
      hangUp,
      headers,
    );
  }
  const answer = (async () => {
    const result = (await transport.handle(request as Record<string, unknown>, context)) as JsonRpcResponse;
    return refusal() ?? Response.json(withDetails(result, errors[0]), { headers });
  })();
  return blocking ? blockingAnswer(answer, hangUp, headers) : answer;
}
