import { AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from "@a2a-js/sdk";
import { PushNotificationNotSupportedError, restStatusFor, toRestErrorBody, VersionNotSupportedError } from "@a2a-js/sdk/errors";
import type { Context, MiddlewareHandler } from "hono";
import type { GatedEnv } from "../auth/gate";
import type { Scope } from "../auth/scopes";
import type { AppFetch } from "../channels/v1-call";
import { ApiError, invalidRequest } from "../http/problem";
import { createRouter } from "../http/router";
import { limitBody, MiB } from "../http/middleware";
import { agentRequest, blockingAnswer, eventStream, requestedVersion, resumePoint } from "./agent-request";
import { malformed, projectDetail, projectReasonOf } from "./errors";
import type { ProjectAgent } from "./project-agent";

const A2A_JSON = "application/a2a+json";
const JSON_TYPES = new Set(["application/json", A2A_JSON]);

/** One HTTP+JSON operation: its methods, scope, and what it does with the agent (a JSON answer, or a stream of events). */
type Operation = {
  methods: string[];
  scope: Scope;
  run(agent: ProjectAgent, input: { id: string; body: Record<string, unknown>; query: Record<string, string> }): Promise<unknown> | AsyncGenerator<StreamResponse>;
  blocking?: true;
};

/** Query values as the request's ProtoJSON would carry them: numbers and booleans where the field is one. */
const listQuery = (query: Record<string, string>) => ({
  ...query,
  ...(query.pageSize === undefined ? {} : { pageSize: Number(query.pageSize) }),
  ...(query.historyLength === undefined ? {} : { historyLength: Number(query.historyLength) }),
  ...(query.includeArtifacts === undefined ? {} : { includeArtifacts: query.includeArtifacts === "true" }),
});
const historyQuery = (query: Record<string, string>) => (query.historyLength === undefined ? {} : { historyLength: Number(query.historyLength) });
const noPush = async () => {
  throw new PushNotificationNotSupportedError({ message: "This agent sends no push notifications yet: follow a task with SubscribeToTask." });
};

/** The operation a path names, and the task id in it (the routes the A2A 1.0 HTTP+JSON binding defines). */
function operationOf(path: string): { operation: Operation; id: string } | undefined {
  if (path === "/message:send") {
    return {
      id: "",
      operation: {
        methods: ["POST"],
        scope: "chat:write",
        blocking: true,
        run: async (agent, { body }) => ({ task: Task.toJSON(await agent.sendMessage(SendMessageRequest.fromJSON(body))) }),
      },
    };
  }
  if (path === "/message:stream")
    return { id: "", operation: { methods: ["POST"], scope: "chat:write", run: (agent, { body }) => agent.sendMessageStream(SendMessageRequest.fromJSON(body)) } };
  if (path === "/tasks") {
    return {
      id: "",
      operation: {
        methods: ["GET"],
        scope: "chat:read",
        run: async (agent, { query }) => ListTasksResponse.toJSON(await agent.listTasks(ListTasksRequest.fromJSON(listQuery(query)))),
      },
    };
  }
  if (path === "/extendedAgentCard") {
    return { id: "", operation: { methods: ["GET"], scope: "chat:read", run: async (agent) => AgentCard.toJSON(await agent.getAuthenticatedExtendedAgentCard({ tenant: "" })) } };
  }
  const task = /^\/tasks\/([^/:]+)(:cancel|:subscribe|\/pushNotificationConfigs(?:\/[^/]+)?)?$/.exec(path);
  if (!task) return undefined;
  const [, id = "", action] = task;
  if (action === undefined) {
    return {
      id,
      operation: {
        methods: ["GET"],
        scope: "chat:read",
        run: async (agent, { query }) => Task.toJSON(await agent.getTask(GetTaskRequest.fromJSON({ id, ...historyQuery(query) }))),
      },
    };
  }
  if (action === ":cancel")
    return { id, operation: { methods: ["POST"], scope: "chat:write", run: async (agent) => Task.toJSON(await agent.cancelTask(CancelTaskRequest.fromJSON({ id }))) } };
  if (action === ":subscribe")
    return { id, operation: { methods: ["POST", "GET"], scope: "chat:read", run: (agent) => agent.resubscribe(SubscribeToTaskRequest.fromJSON({ id })) } };
  // Push configs: the list and one config, read (GET) or written (POST a new one, DELETE one).
  return action.includes("/pushNotificationConfigs/")
    ? { id, operation: { methods: ["GET", "DELETE"], scope: "chat:read", run: noPush } }
    : { id, operation: { methods: ["GET", "POST"], scope: "chat:read", run: noPush } };
}

/** An A2A error as the HTTP+JSON binding answers it (google.rpc.Status), with the /v1 code behind it when there is one. */
function errorBody(error: unknown) {
  const status = restStatusFor(error);
  const body = toRestErrorBody(error, status);
  const reason = projectReasonOf(error);
  if (reason) body.error.details = [...(body.error.details ?? []), projectDetail(reason)];
  return { status, body };
}

/**
 * `{agent}/rest`: the HTTP+JSON binding of A2A 1.0 over the same request handler as JSON-RPC. The credential is checked
 * and counted first, then the body's type, the version (1.0 only: v0.3's REST is not served), the scope and the rest.
 */
export function createRestRoutes(appFetch: AppFetch, credentials: MiddlewareHandler<GatedEnv>) {
  const rest = createRouter<GatedEnv>();
  // Every method reaches serve(), which knows each path's methods (405 with Allow for the others).
  rest.all("/*", limitBody(MiB), credentials, (c) => serve(c, appFetch));
  return rest;
}

async function serve(c: Context<GatedEnv>, appFetch: AppFetch): Promise<Response> {
  const path = c.req.path.slice(c.req.path.indexOf("/rest") + "/rest".length);
  const found = operationOf(path);
  if (!found) throw new ApiError(404, "not_found", "No A2A operation has this path.");
  const { operation, id } = found;
  if (!operation.methods.includes(c.req.method)) {
    throw new ApiError(405, "method_not_allowed", `This A2A operation takes ${operation.methods.join(" or ")}.`, { headers: { allow: operation.methods.join(", ") } });
  }
  let body: Record<string, unknown> = {};
  if (c.req.method === "POST") {
    const text = await c.req.text();
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (text !== "" && !JSON_TYPES.has(type)) {
      throw invalidRequest("Send the body as JSON (Content-Type: application/a2a+json or application/json).", [{ path: "content-type", message: "not JSON" }]);
    }
    const answer = (error: unknown) => {
      const { status, body: problem } = errorBody(error);
      return c.json(problem, status as 400);
    };
    try {
      const parsed: unknown = text === "" ? {} : JSON.parse(text);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return answer(malformed("The body must be a JSON object."));
      body = parsed as Record<string, unknown>;
    } catch {
      return answer(malformed("The body is not JSON."));
    }
  }
  const version = requestedVersion(c);
  if (version !== "1.0") {
    const { status, body: problem } = errorBody(
      new VersionNotSupportedError({ message: "The HTTP+JSON binding speaks A2A 1.0 only: send A2A-Version: 1.0 (v0.3 clients use JSON-RPC)." }),
    );
    return c.json(problem, status as 400);
  }
  if (!c.get("caller").scopes.includes(operation.scope)) {
    throw new ApiError(403, "insufficient_scope", `This operation needs a token with the ${operation.scope} scope.`, {
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${operation.scope}"` },
    });
  }
  const resume = resumePoint(c);
  const { agent, errors, headers, hangUp, refusal } = agentRequest(c, appFetch, resume === "bad" ? undefined : resume, version);
  const failed = (error: unknown) => {
    const refused = refusal();
    if (refused) return refused;
    const { status, body: problem } = errorBody(error);
    return Response.json(problem, { status, headers: { ...headers, "content-type": A2A_JSON } });
  };
  if (resume === "bad") return failed(malformed("Last-Event-ID must be a non-negative integer."));
  const query = c.req.query();
  const result = (() => {
    try {
      return operation.run(agent as unknown as ProjectAgent, { id, body, query });
    } catch (error) {
      return Promise.reject(error);
    }
  })();
  if (Symbol.asyncIterator in result) {
    const events = (result as AsyncGenerator<StreamResponse>)[Symbol.asyncIterator]();
    const frame = (event: StreamResponse) => {
      const json = StreamResponse.toJSON(event) as Record<string, { metadata?: Record<string, { eventId?: string }> }>;
      const eventId = Object.values(json)[0]?.metadata?.["urn:project-chat:a2a:event-id:v1"]?.eventId;
      return `${eventId === undefined ? "" : `id: ${eventId}\n`}data: ${JSON.stringify(json)}\n\n`;
    };
    return eventStream(events, { event: frame, error: (error) => `event: error\ndata: ${JSON.stringify(errorBody(error).body)}\n\n` }, failed, hangUp, headers);
  }
  const answer = (result as Promise<unknown>).then(
    (json) => refusal() ?? Response.json(json ?? {}, { headers: { ...headers, "content-type": A2A_JSON } }),
    (error: unknown) => failed(errors[0] ?? error),
  );
  return operation.blocking ? blockingAnswer(answer, hangUp) : answer;
}
