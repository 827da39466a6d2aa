import { z } from "@hono/zod-openapi";
import { PathId } from "../ids";
import { WEBHOOK_URL_MAX } from "./url-rules";
import { WEBHOOK_EVENT_TYPES } from "../chats/event-registry";
import { ProjectId } from "../projects/schemas";

// The names are the registry's (event-registry.ts), the same list the OpenAPI webhooks and the chat's payloads use.
export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = z.infer<typeof WebhookEventType>;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
const DESCRIPTION_MAX = 200;

export const CreateWebhookBody = z
  .strictObject({
    url: z
      .string()
      .max(WEBHOOK_URL_MAX)
      .openapi({
        format: "uri",
        description:
          "https (http only for localhost, 127.0.0.1 or [::1] while WEBHOOK_ALLOW_LOOPBACK is true); no user info, no fragment; no private, loopback, link-local or reserved IP literal; " +
          "a public host name (not a single label such as `vm`, nor a name under .localhost, .local, .internal, .home.arpa, .test or another special-use or private suffix)",
        example: "https://example.com/hooks/project-chat",
      }),
    events: z.array(WebhookEventType).min(1).optional().openapi({ description: "The event types to receive; every type when left out" }),
    description: z
      .string()
      .refine((s) => [...s].length <= DESCRIPTION_MAX, `description must be at most ${DESCRIPTION_MAX} characters`)
      .optional()
      .openapi({ maxLength: DESCRIPTION_MAX }),
  })
  .openapi("CreateWebhook");

export const WebhookEndpoint = z
  .object({
    id: z.uuid(),
    url: z.string().openapi({ format: "uri" }),
    events: z.array(WebhookEventType),
    description: z.string(),
    createdAt: z.iso.datetime(),
    disabledAt: z.iso.datetime().nullable().openapi({ description: "Set after 50 consecutive failed deliveries; a disabled endpoint receives nothing more" }),
  })
  .openapi("WebhookEndpoint");
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const CreatedWebhook = z
  .object({
    endpoint: WebhookEndpoint,
    secret: z.string().openapi({ description: "whsec_ and the base64 of 32 random bytes: the signing secret, shown only in this response", example: "whsec_…" }),
  })
  .openapi("CreatedWebhook");

export const WebhookList = z.object({ items: z.array(WebhookEndpoint) }).openapi("WebhookList");

export const WebhookDelivery = z
  .object({
    id: z.uuid(),
    endpointId: z.uuid(),
    eventType: WebhookEventType,
    webhookId: z.string().openapi({ description: "The webhook-id header's value, the same on every attempt" }),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int().min(0),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .openapi("WebhookDelivery");
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export const WebhookDeliveryList = z.object({ items: z.array(WebhookDelivery) }).openapi("WebhookDeliveryList");

export const WebhookParams = z.object({ projectId: ProjectId, endpointId: PathId });
