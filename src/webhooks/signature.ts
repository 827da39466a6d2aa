// Standard Webhooks: the signature over "{webhook-id}.{webhook-timestamp}.{body}", and an id per event and endpoint.
import { fromBase64, sha256, toBase64, toBase64Url } from "../crypto";

const encoder = new TextEncoder();

/** `v1,<base64 HMAC-SHA256>` keyed with the base64-decoded part of the secret after `whsec_`. */
export async function signWebhook(secret: string, webhookId: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice("whsec_".length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `v1,${toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${webhookId}.${timestamp}.${body}`))))}`;
}

/** The same for every attempt of one event at one endpoint, so a retried hand-off never makes a second id. */
export async function webhookIdOf(eventId: string, endpointId: string): Promise<string> {
  return `msg_${toBase64Url(await sha256(`${eventId}:${endpointId}`)).slice(0, 32)}`;
}
