// An endpoint's signing secret: shown once, kept encrypted with the Worker secret WEBHOOK_KEY (AES-GCM).
const encoder = new TextEncoder();
const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unbase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${base64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The AES-GCM key from WEBHOOK_KEY (any string; its SHA-256 is the key). */
async function keyOf(webhookKey: string): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(webhookKey));
  return crypto.subtle.importKey("raw", digest, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** `v1.<iv>.<ciphertext>`, base64; a fresh IV each time. */
export async function encryptSecret(secret: string, webhookKey: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyOf(webhookKey), encoder.encode(secret)));
  return `v1.${base64(iv)}.${base64(sealed)}`;
}

export async function decryptSecret(sealed: string, webhookKey: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("not a sealed webhook secret");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unbase64(iv) }, await keyOf(webhookKey), unbase64(data));
  return new TextDecoder().decode(plain);
}
