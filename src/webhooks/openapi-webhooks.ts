import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { retrySchedule } from "./delivery";
import { WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES, webhookPayloadSchema } from "../chats/event-registry";

const SignatureHeaders = z.object({
  "webhook-id": z.string().openapi({ description: "The same on every attempt of one event for one endpoint: receivers deduplicate on it" }),
  "webhook-timestamp": z.string().openapi({ description: "Unix seconds of this attempt" }),
  "webhook-signature": z
    .string()
    .openapi({ description: 'v1,<base64 HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}", keyed with the base64-decoded part of the secret after whsec_>' }),
});

/** The events a webhook endpoint receives, in the document's `webhooks` section (OpenAPI 3.1), so generators and the reference show the payloads. */
export function registerWebhookEvents(app: OpenAPIHono<AppEnv>): void {
  for (const type of WEBHOOK_EVENT_TYPES) {
    const schema = webhookPayloadSchema(type);
    const summary = WEBHOOK_EVENTS[type].about;
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      operationId: `webhook_${type.replace(".", "_")}`,
      tags: ["Webhooks"],
      summary,
      // Sent by the service, not called on it: the receiver checks webhook-signature instead of a credential.
      security: [],
      description: `Signed as Standard Webhooks. A 2xx within 15 s delivers it; anything else (redirects are not followed) is tried again after about ${retrySchedule()}.`,
      request: { headers: SignatureHeaders, body: { required: true, content: { "application/json": { schema } } } },
      responses: { 200: { description: "Any 2xx acknowledges the delivery" } },
    });
  }
}
