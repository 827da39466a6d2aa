import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { anonymous, problems } from "../http/router";
import { security } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";

const GUIDE = 'How to use it: the README, "Use it from another agent (A2A)"; the shapes: the A2A 1.0 specification (a2a-protocol.org).';
// A2A's own messages: described by its specification, not by this document's schemas.
const A2aJson = z.looseObject({}).openapi("A2aMessage", { description: "An A2A message, as its specification defines it" });

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
    description: `The same for any project id: 1.0 with A2A-Version: 1.0, else v0.3. ${GUIDE}`,
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
    description: `One JSON-RPC 2.0 request per call. ${GUIDE}`,
    security,
    request: { params: ProjectParams, body: { required: true, content: { "application/json": { schema: A2aJson } } } },
    responses: {
      200: {
        description: "The answer, or an event stream",
        content: { "application/json": { schema: A2aJson }, "text/event-stream": { schema: z.string() } },
      },
      // Refused before A2A answers: credentials, the rate limit and stream places, scope and role, as on /v1.
      ...problems(401, 403, 429),
    },
  });
  registry.registerPath({
    method: "post",
    path: `${base}/rest/{operation}`,
    operationId: "callAgentRest",
    tags: ["A2A"],
    summary: "A2A over HTTP+JSON (1.0 only)",
    description: `message:send, message:stream, tasks, tasks/{id}, tasks/{id}:cancel, tasks/{id}:subscribe, extendedAgentCard. ${GUIDE}`,
    security,
    request: { params: ProjectParams.extend({ operation: z.string().openapi({ description: "The operation's path in the binding" }) }) },
    responses: {
      200: {
        description: "The answer, or an event stream",
        content: { "application/a2a+json": { schema: A2aJson }, "text/event-stream": { schema: z.string() } },
      },
      ...problems(401, 403, 429),
    },
  });
}
