import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { anonymous, problems } from "../http/router";
import { security } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";

const GUIDE = "How to use it: the A2A guide (docs/guide/a2a.md); the shapes: the A2A 1.0 specification (a2a-protocol.org).";
// A2A's own messages: described by its specification, not by this document's schemas.
const A2aJson = z.looseObject({}).openapi("A2aMessage", { description: "An A2A message, as its specification defines it" });
const answer = { description: "The answer, or an event stream", content: { "application/json": { schema: A2aJson }, "text/event-stream": { schema: z.string() } } };

/**
 * The A2A endpoints in the OpenAPI document, as what they are: the agent card, and A2A's own bindings (JSON-RPC and
 * HTTP+JSON), whose messages the A2A specification describes; each points to the A2A guide for how to use them.
 */
export function registerA2aPaths(app: OpenAPIHono<AppEnv>): void {
  const base = "/a2a/projects/{projectId}";
  app.openAPIRegistry.registerPath({
    method: "get",
    path: `${base}/.well-known/agent-card.json`,
    operationId: "getAgentCard",
    tags: ["A2A"],
    summary: "A project's A2A agent card (public; 1.0 with A2A-Version: 1.0, else v0.3)",
    description: GUIDE,
    security: anonymous,
    request: { params: ProjectParams },
    responses: { 200: { description: "The card, the same for any project id", content: { "application/json": { schema: A2aJson } } } },
  });
  // Refused before A2A answers (credentials, the rate limit and stream places, scope and role): problem+json, as on /v1.
  for (const [path, operationId, summary] of [
    [base, "callAgentJsonRpc", "A2A over JSON-RPC: 1.0 with A2A-Version: 1.0, v0.3 without"],
    [`${base}/rest/{operation}`, "callAgentRest", "A2A over HTTP+JSON (1.0)"],
  ]) {
    app.openAPIRegistry.registerPath({
      method: "post",
      path: path!,
      operationId,
      tags: ["A2A"],
      summary,
      description: GUIDE,
      security,
      request: {
        params: path === base ? ProjectParams : ProjectParams.extend({ operation: z.string() }),
        body: { required: true, content: { "application/json": { schema: A2aJson } } },
      },
      responses: { 200: answer, ...problems(401, 403, 429) },
    });
  }
}
