import type { webhooks } from "./generated/api.ts";

/** A webhook delivery's body, typed by its `type`: one per event of the document's `webhooks` (generated, so a new event type comes with it). */
export type WebhookEvent = {
  [T in keyof webhooks]: webhooks[T]["post"] extends { requestBody: { content: { "application/json": infer Body } } } ? Body : never;
}[keyof webhooks];

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

// Deliveries older (or newer) than this are refused, so a captured one cannot be replayed later.
const TOLERANCE_S = 5 * 60;
const encoder = new TextEncoder();

/**
 * Checks a delivery as Standard Webhooks signs it (webhook-id, webhook-timestamp, webhook-signature
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the secret after `whsec_`) and
 * returns its event; throws WebhookVerificationError when it is not authentic or not recent.
 * Pass the body exactly as received (the raw text, before any JSON parsing).
 */
export async function verifyWebhook(secret: string, rawBody: string, headers: Headers | Record<string, string | string[] | undefined>): Promise<WebhookEvent> {
  const get = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const id = get("webhook-id");
  const timestamp = get("webhook-timestamp");
  const signatures = get("webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds) || Math.abs(Date.now() / 1000 - seconds) > TOLERANCE_S) throw new WebhookVerificationError("the timestamp is not recent");
  if (!secret.startsWith("whsec_")) throw new WebhookVerificationError("the secret is not a whsec_ secret");
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice("whsec_".length)), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  for (const signature of signatures.split(" ")) {
    const [version, value] = signature.split(",");
    if (version !== "v1" || !value) continue;
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, fromBase64(value), encoder.encode(`${id}.${timestamp}.${rawBody}`))) return JSON.parse(rawBody) as WebhookEvent;
  }
  throw new WebhookVerificationError("no signature matches");
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return new Uint8Array(0);
  }
}
