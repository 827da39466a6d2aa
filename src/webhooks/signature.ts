// Standard Webhooks: the signature over "{webhook-id}.{webhook-timestamp}.{body}", and an id per event and endpoint.
const encoder = new TextEncoder();
const base64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** `v1,<base64 HMAC-SHA256>` keyed with the base64-decoded part of the secret after `whsec_`. */
export async function signWebhook(secret: string, webhookId: string, timestamp: number, body: string): Promise<string> {
  const raw = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `v1,${base64(await crypto.subtle.sign("HMAC", key, encoder.encode(`${webhookId}.${timestamp}.${body}`)))}`;
}

/** The same for every attempt of one event at one endpoint, so a retried hand-off never makes a second id. */
export async function webhookIdOf(eventId: string, endpointId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(`${eventId}:${endpointId}`));
  return `msg_${base64(digest).replace(/\+/g, "-").replace(/\//g, "_").slice(0, 32)}`;
}
