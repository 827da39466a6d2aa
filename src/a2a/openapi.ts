import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { anonymous, problems } from "../http/router";
import { security } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";

const GUIDE = 'How to use it: the README, "Use it from another agent (A2A)"; the shapes: the A2A 1.0 specification (a2a-protocol.org).';
// A2A's own messages: described by its specification, not by this document's schemas.
const A2aJson = z.looseObject({}).openapi("A2aMessage", { description: "An A2A 1.0 (ProtoJSON) or v0.3 JSON object, as the A2A specification defines it" });
const TaskId = z.object({ projectId: ProjectParams.shape.projectId, taskId: z.uuid().openapi({ description: "A task: the id of the submission that leads it" }) });
const json = (description: string) => ({ description, content: { "application/a2a+json": { schema: A2aJson } } });

type Rest = { method: "get" | "post"; path: string; operationId: string; summary: string; task?: true; body?: true; stream?: true };
const REST: Rest[] = [
  { method: "post", path: "/message:send", operationId: "agentRestSendMessage", summary: "SendMessage", body: true },
  { method: "post", path: "/message:stream", operationId: "agentRestSendStreamingMessage", summary: "SendStreamingMessage", body: true, stream: true },
  { method: "get", path: "/tasks", operationId: "agentRestListTasks", summary: "ListTasks (contextId required)" },
  { method: "get", path: "/tasks/{taskId}", operationId: "agentRestGetTask", summary: "GetTask", task: true },
  { method: "post", path: "/tasks/{taskId}:cancel", operationId: "agentRestCancelTask", summary: "CancelTask", task: true },
  {
    method: "post",
    path: "/tasks/{taskId}:subscribe",
    operationId: "agentRestSubscribeToTask",
    summary: "SubscribeToTask (also GET; Last-Event-ID resumes)",
    task: true,
    stream: true,
  },
  { method: "get", path: "/extendedAgentCard", operationId: "agentRestGetExtendedAgentCard", summary: "GetExtendedAgentCard" },
];

/**
 * The A2A endpoints in the OpenAPI document, as what they are: the agent card, and A2A's own bindings (JSON-RPC and
 * HTTP+JSON), whose messages the A2A specification describes; each points to the README's section for how to use them.
 */
export function registerA2aPaths(app: OpenAPIHono<AppEnv>): void {
  const registry = app.openAPIRegistry;
  const base = "/a2a/projects/{projectId}";
  registry.registerPath({
    method: "get",
    path: `${base}/.well-known/agent-card.json`,
    operationId: "getAgentCard",
    tags: ["A2A"],
    summary: "A project's A2A agent card (public)",
    description: `The same for any project id: the 1.0 card with A2A-Version: 1.0, else the v0.3 card (another version: 400 with an A2A error body). ${GUIDE}`,
    security: anonymous,
    request: { params: ProjectParams },
    responses: {
      200: { description: "The card", content: { "application/json": { schema: A2aJson } } },
      304: { description: "Not modified" },
    },
  });
  registry.registerPath({
    method: "post",
    path: base,
    operationId: "callAgentJsonRpc",
    tags: ["A2A"],
    summary: "A2A over JSON-RPC: 1.0 with A2A-Version: 1.0, v0.3 without",
    description: `One JSON-RPC 2.0 request per call. Errors are JSON-RPC errors (HTTP 200), except credentials, rate, scope and role (problem+json). ${GUIDE}`,
    security,
    request: { params: ProjectParams, body: { required: true, content: { "application/json": { schema: A2aJson } } } },
    responses: {
      200: {
        description: "The JSON-RPC response, or for a stream an event stream of them",
        content: { "application/json": { schema: A2aJson }, "text/event-stream": { schema: z.string() } },
      },
    },
  });
  for (const operation of REST) {
    registry.registerPath({
      method: operation.method,
      path: `${base}/rest${operation.path}`,
      operationId: operation.operationId,
      tags: ["A2A"],
      summary: `A2A over HTTP+JSON: ${operation.summary}`,
      description: `A2A 1.0 only (A2A-Version: 1.0); errors as google.rpc.Status. ${GUIDE}`,
      security,
      request: {
        params: operation.task ? TaskId : ProjectParams,
        ...(operation.body ? { body: { required: true, content: { "application/a2a+json": { schema: A2aJson } } } } : {}),
      },
      responses: {
        200: operation.stream ? { description: "An event stream of StreamResponses", content: { "text/event-stream": { schema: z.string() } } } : json("The answer"),
        ...problems(401, 403, 429),
      },
    });
  }
}
