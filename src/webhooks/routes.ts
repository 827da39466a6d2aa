import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { GatedEnv } from "../auth/gate";
import { ApiError, invalidRequest, notFound } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { webhookKey } from "./delivery";
import { encryptSecret, newWebhookSecret } from "./secrets";
import { CreatedWebhook, CreateWebhookBody, WEBHOOK_EVENT_TYPES, WebhookDeliveryList, WebhookList, WebhookParams } from "./schemas";
import { webhookUrlProblem } from "./url-rules";
import { isUuid } from "../ids";
import { WEBHOOKS_PER_PROJECT } from "./endpoints";
import { authorise, read, security, write } from "../projects/guards";
import { ProjectParams } from "../projects/schemas";

/** Webhook endpoints of a project, managed by its owner (a webhook receives every chat's content). */
export const webhookRoutes = createRouter<GatedEnv>();
const tags = ["Webhooks"];

/** The project's webhooks object, for its owner only: 404 as for chats when not a member, 403 for editors and viewers. */
async function ownersWebhooks(c: Context<GatedEnv>, need: "read" | "write", projectId: string) {
  const access = await authorise(c, need, projectId);
  if (access.role !== "owner") throw new ApiError(403, "forbidden", "Only the project's owner manages its webhooks: they receive every chat's content.");
  return { project: c.env.PROJECT_WEBHOOKS.getByName(access.projectId), projectId: access.projectId };
}
const endpointNotFound = () => notFound("This project has no webhook endpoint with that id.");

webhookRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{projectId}/webhooks",
    operationId: "createWebhook",
    tags,
    summary: "Register a webhook endpoint; its signing secret is shown only in this answer",
    description:
      `The project's owner only (403 for other members). At most ${WEBHOOKS_PER_PROJECT} endpoints per project (409 \`webhook_limit_reached\`). Deliveries follow Standard Webhooks ` +
      '(`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`); the events and their payloads are in this document\'s `webhooks`.',
    security,
    middleware: write,
    request: { params: ProjectParams, body: jsonBody(CreateWebhookBody) },
    responses: { 201: jsonResponse(CreatedWebhook, "The endpoint and its secret"), ...problems(400, 401, 403, 404, 409, 429) },
  }),
  async (c) => {
    const { project, projectId } = await ownersWebhooks(c, "write", c.req.valid("param").projectId);
    const body = c.req.valid("json");
    const problem = webhookUrlProblem(body.url, c.env.WEBHOOK_ALLOW_LOOPBACK === "true");
    if (problem) throw invalidRequest("The webhook URL cannot be used.", [{ path: "url", message: problem }]);
    const key = webhookKey(c.env);
    if (!key) throw new ApiError(503, "service_unavailable", "Webhooks are not configured on this deployment (WEBHOOK_KEY is not set).");
    const secret = newWebhookSecret();
    const events = body.events ? WEBHOOK_EVENT_TYPES.filter((type) => body.events!.includes(type)) : [...WEBHOOK_EVENT_TYPES];
    const created = await project.create(projectId, { url: body.url, events, description: body.description ?? "", sealedSecret: await encryptSecret(secret, key) });
    if (created.kind === "limit") throw new ApiError(409, "webhook_limit_reached", `This project has ${WEBHOOKS_PER_PROJECT} webhook endpoints; delete one first.`);
    return c.json({ endpoint: created.endpoint, secret }, 201);
  },
);

webhookRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/webhooks",
    operationId: "listWebhooks",
    tags,
    summary: "List the project's webhook endpoints (never their secrets)",
    security,
    middleware: read,
    request: { params: ProjectParams },
    responses: { 200: jsonResponse(WebhookList, "The endpoints, oldest first"), ...problems(400, 401, 403, 404, 429) },
  }),
  async (c) => {
    const { project } = await ownersWebhooks(c, "read", c.req.valid("param").projectId);
    return c.json({ items: await project.list() }, 200);
  },
);

webhookRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{projectId}/webhooks/{endpointId}",
    operationId: "deleteWebhook",
    tags,
    summary: "Delete a webhook endpoint: no attempt starts after this answers",
    security,
    middleware: write,
    request: { params: WebhookParams },
    responses: { 204: { description: "Deleted" }, ...problems(400, 401, 403, 404, 429) },
  }),
  async (c) => {
    const { project, projectId } = await ownersWebhooks(c, "write", c.req.valid("param").projectId);
    const { endpointId } = c.req.valid("param");
    if (!isUuid(endpointId) || !(await project.remove(projectId, endpointId))) throw endpointNotFound();
    return c.body(null, 204);
  },
);

webhookRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/webhooks/{endpointId}/deliveries",
    operationId: "listWebhookDeliveries",
    tags,
    summary: "The endpoint's newest 100 deliveries, newest first",
    security,
    middleware: read,
    request: { params: WebhookParams },
    responses: { 200: jsonResponse(WebhookDeliveryList, "Deliveries: pending (with the next attempt's time), delivered or failed"), ...problems(400, 401, 403, 404, 429) },
  }),
  async (c) => {
    const { endpointId } = c.req.valid("param");
    const { project } = await ownersWebhooks(c, "read", c.req.valid("param").projectId);
    const items = isUuid(endpointId) ? await project.deliveries(endpointId) : null;
    if (!items) throw endpointNotFound();
    return c.json({ items }, 200);
  },
);
