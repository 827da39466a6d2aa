import { ContentTypeNotSupportedError, restStatusFor, toRestErrorBody, VersionNotSupportedError } from "@a2a-js/sdk/errors";
import { JsonRpcTransportHandler } from "@a2a-js/sdk/server";
import type { Context, MiddlewareHandler } from "hono";
import type { GatedEnv } from "../auth/gate";
import type { Scope } from "../auth/scopes";
import { limitBody, MiB } from "../http/middleware";
import { ApiError } from "../http/problem";
import { createRouter } from "../http/router";
import { agentRequest, blockingAnswer, eventStream, refusedParams, requestedVersion, requireJsonBody, resumePoint } from "./agent-request";
import { extraDetailsOf, malformed } from "./errors";
import { eventIdOf } from "./task-feed";

const A2A_JSON = "application/a2a+json";
const STREAMING = new Set(["SendStreamingMessage", "SubscribeToTask"]);

type Input = { body: Record<string, unknown>; query: Record<string, string> };
/**
 * One HTTP+JSON operation: its methods and scope, and the 1.0 method it is, with its params from the path, query and
 * body. The same request handler answers through the SDK's JSON-RPC transport, so both bindings share every conversion.
 */
type Operation = { methods: string[]; scope: Scope; method: string; params(input: Input): Record<string, unknown> };

const historyQuery = (query: Record<string, string>) => (query.historyLength === undefined ? {} : { historyLength: Number(query.historyLength) });
// Query strings as the request's ProtoJSON carries them: numbers and a boolean where the field is one.
const listQuery = (query: Record<string, string>) => ({
  ...query,
  ...(query.pageSize === undefined ? {} : { pageSize: Number(query.pageSize) }),
  ...historyQuery(query),
  ...(query.includeArtifacts === undefined ? {} : { includeArtifacts: query.includeArtifacts === "true" }),
});

/** The operation a path and method name (the routes the A2A 1.0 HTTP+JSON binding defines). */
function operationOf(path: string, method: string): Operation | undefined {
  const body = ({ body }: Input) => body;
  if (path === "/message:send") return { methods: ["POST"], scope: "chat:write", method: "SendMessage", params: body };
  if (path === "/message:stream") return { methods: ["POST"], scope: "chat:write", method: "SendStreamingMessage", params: body };
  if (path === "/tasks") return { methods: ["GET"], scope: "chat:read", method: "ListTasks", params: ({ query }) => listQuery(query) };
  if (path === "/extendedAgentCard") return { methods: ["GET"], scope: "chat:read", method: "GetExtendedAgentCard", params: () => ({}) };
  const task = /^\/tasks\/([^/:]+)(:cancel|:subscribe|\/pushNotificationConfigs(\/[^/]+)?)?$/.exec(path);
  if (!task) return undefined;
  const [, id = "", action, config] = task;
  if (action === undefined) return { methods: ["GET"], scope: "chat:read", method: "GetTask", params: ({ query }) => ({ id, ...historyQuery(query) }) };
  if (action === ":cancel") return { methods: ["POST"], scope: "chat:write", method: "CancelTask", params: () => ({ id }) };
  if (action === ":subscribe") return { methods: ["POST", "GET"], scope: "chat:read", method: "SubscribeToTask", params: () => ({ id }) };
  if (config === undefined) {
    const methods = ["GET", "POST"];
    return method === "POST"
      ? { methods, scope: "chat:write", method: "CreateTaskPushNotificationConfig", params: ({ body }) => ({ ...body, taskId: id }) }
      : { methods, scope: "chat:read", method: "ListTaskPushNotificationConfigs", params: ({ query }) => ({ ...query, taskId: id }) };
  }
  // Ids are of A-Z, a-z, 0-9, _ and -: an escaped one names no config.
  const configId = config.slice(1);
  return method === "DELETE"
    ? { methods: ["GET", "DELETE"], scope: "chat:write", method: "DeleteTaskPushNotificationConfig", params: () => ({ taskId: id, id: configId }) }
    : { methods: ["GET", "DELETE"], scope: "chat:read", method: "GetTaskPushNotificationConfig", params: () => ({ taskId: id, id: configId }) };
}

/** An A2A error as the HTTP+JSON binding answers it (google.rpc.Status), with the /v1 code behind it when there is one. */
function errorBody(error: unknown) {
  // The specification's table maps ContentTypeNotSupportedError to 415 (the SDK's REST mapping says 400).
  const status = error instanceof ContentTypeNotSupportedError ? 415 : restStatusFor(error);
  const body = toRestErrorBody(error, status);
  const extra = extraDetailsOf(error);
  if (extra.length > 0) body.error.details = [...(body.error.details ?? []), ...extra];
  return { status, body };
}

/**
 * `{agent}/rest`: the HTTP+JSON binding of A2A 1.0 over the same request handler as JSON-RPC. The credential is checked
 * and counted first, then the body's type, the version (1.0 only: v0.3's REST is not served), the scope and the rest.
 */
export function createRestRoutes(credentials: MiddlewareHandler<GatedEnv>) {
  const rest = createRouter<GatedEnv>();
  // Every method reaches serve(), which knows each path's methods (405 with Allow for the others).
  rest.all("/*", credentials, limitBody(MiB), (c) => serve(c));
  return rest;
}

/** The body of a POST: a JSON object (or nothing), else the A2A error to answer with. */
async function bodyOf(c: Context<GatedEnv>): Promise<Record<string, unknown> | Error> {
  if (c.req.method !== "POST") return {};
  const text = await c.req.text();
  if (text !== "") requireJsonBody(c);
  try {
    const parsed: unknown = text === "" ? {} : JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : malformed("The body must be a JSON object.");
  } catch {
    return malformed("The body is not JSON.");
  }
}

type Answer = { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown>[] } };

async function serve(c: Context<GatedEnv>): Promise<Response> {
  const operation = operationOf(c.req.path.slice(c.req.path.indexOf("/rest") + "/rest".length), c.req.method);
  if (!operation) throw new ApiError(404, "not_found", "No A2A operation has this path.");
  if (!operation.methods.includes(c.req.method)) {
    throw new ApiError(405, "method_not_allowed", `This A2A operation takes ${operation.methods.join(" or ")}.`, { headers: { allow: operation.methods.join(", ") } });
  }
  const asJson = (error: unknown, headers: Record<string, string> = {}) => {
    const { status, body } = errorBody(error);
    return Response.json(body, { status, headers: { ...headers, "content-type": A2A_JSON } });
  };
  const body = await bodyOf(c);
  if (body instanceof Error) return asJson(body);
  const version = requestedVersion(c);
  if (version !== "1.0") return asJson(new VersionNotSupportedError({ message: "The HTTP+JSON binding speaks A2A 1.0 only: send A2A-Version: 1.0 (v0.3 clients use JSON-RPC)." }));
  if (!c.get("caller").scopes.includes(operation.scope)) {
    throw new ApiError(403, "insufficient_scope", `This operation needs a token with the ${operation.scope} scope.`, {
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${operation.scope}"` },
    });
  }
  const resume = resumePoint(c);
  if (resume === "bad") return asJson(malformed("Last-Event-ID must be a non-negative integer."));
  const streaming = STREAMING.has(operation.method);
  const blocking = operation.method === "SendMessage";
  const { agent, errors, context, headers, hangUp, refusal } = agentRequest(c, resume, version, streaming || blocking);
  // The transport turns what the handler threw into a JSON-RPC error: the error itself (kept) is what this binding shows.
  // The transport's own refusal (the method's params, before the handler is called) is the one kind it makes itself.
  const failed = (answer: Answer) => refusal() ?? asJson(errors[0] ?? malformed(answer.error!.message), headers);
  const params = operation.params({ body, query: c.req.query() });
  const refused = refusedParams(params);
  if (refused) return asJson(refused, headers);
  const request = { jsonrpc: "2.0", id: 0, method: operation.method, params };
  const transport = new JsonRpcTransportHandler(agent);
  if (streaming) {
    const handled = (await transport.handle(request, context)) as Answer | AsyncGenerator<Answer>;
    if (!(Symbol.asyncIterator in handled)) return failed(handled);
    // Each event is the StreamResponse itself; an error after the stream began is an `error` event with the error body.
    const frame = (event: Answer) => {
      const eventId = eventIdOf(event.result);
      return `${eventId === undefined ? "" : `id: ${eventId}\n`}data: ${JSON.stringify(event.result)}\n\n`;
    };
    return eventStream(
      handled[Symbol.asyncIterator](),
      { event: frame, error: (error: unknown) => `event: error\ndata: ${JSON.stringify(errorBody(error).body)}\n\n` },
      (error: unknown) => refusal() ?? asJson(error, headers),
      hangUp,
      headers,
    );
  }
  const answer = (async () => {
    const handled = (await transport.handle(request, context)) as Answer;
    if (handled.error) return failed(handled);
    const done = operation.method === "DeleteTaskPushNotificationConfig" ? new Response(null, { status: 204, headers }) : undefined;
    return refusal() ?? done ?? Response.json(handled.result ?? {}, { headers: { ...headers, "content-type": A2A_JSON } });
  })();
  return blocking ? blockingAnswer(answer, hangUp, { ...headers, "content-type": A2A_JSON }) : answer;
}
