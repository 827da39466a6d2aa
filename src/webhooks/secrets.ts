// An endpoint's signing secret: shown once, kept encrypted with the Worker secret WEBHOOK_KEY (AES-GCM).
import { fromBase64, sha256, toBase64 } from "../crypto";

const encoder = new TextEncoder();

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** The AES-GCM key from WEBHOOK_KEY (any string; its SHA-256 is the key). */
async function keyOf(webhookKey: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", await sha256(webhookKey), "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** `v1.<iv>.<ciphertext>`, base64; a fresh IV each time. */
export async function encryptSecret(secret: string, webhookKey: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyOf(webhookKey), encoder.encode(secret)));
  return `v1.${toBase64(iv)}.${toBase64(sealed)}`;
}

export async function decryptSecret(sealed: string, webhookKey: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("not a sealed webhook secret");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(iv) }, await keyOf(webhookKey), fromBase64(data));
  return new TextDecoder().decode(plain);
}
