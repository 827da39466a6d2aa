import type { McpStateConfig } from "../config";
import { fromBase64Url, toBase64Url } from "../crypto";

/**
 * Values an MCP client holds and sends back (task handles, requestStates, 2025 elicitation request ids, session
 * ids), encrypted and authenticated with AES-256-GCM, never only signed: handles travel in Mcp-Name, a header
 * intermediaries log, and must not show a project, chat or submission. Each is bound to its principal (the token
 * or grant) and its purpose as associated data, so another credential's value, or a value of another kind, never opens.
 */
export type SealPurpose = "task" | "request-state" | "elicitation" | "session";

const VERSION = "v1";
const IV_BYTES = 12;
// What a client may be given: short enough for a header, in characters every header and JSON string carries as they are.
const SEALED_MAX = 1024;
const SEALED_SHAPE = /^v1\.[A-Za-z0-9_-]+$/;

const encoder = new TextEncoder();
const keys = new WeakMap<Uint8Array, Promise<CryptoKey>>();
const cryptoKey = (raw: Uint8Array) => {
  let key = keys.get(raw);
  if (!key) keys.set(raw, (key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"])));
  return key;
};
const associated = (purpose: SealPurpose, principal: string) => encoder.encode(`${VERSION}|${purpose}|${principal}`);

export class Sealer {
  constructor(private readonly state: McpStateConfig) {}

  /** How long a requestState or a 2025 elicitation id is accepted after it was issued. */
  get inputTtlMs(): number {
    return this.state.inputTtlMs;
  }

  async seal(purpose: SealPurpose, principal: string, payload: object): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const key = await cryptoKey(this.state.key);
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: associated(purpose, principal) }, key, encoder.encode(JSON.stringify(payload))),
    );
    const bytes = new Uint8Array(IV_BYTES + sealed.byteLength);
    bytes.set(iv);
    bytes.set(sealed, IV_BYTES);
    const value = `${VERSION}.${toBase64Url(bytes)}`;
    if (value.length > SEALED_MAX) throw new Error(`a sealed ${purpose} would be ${value.length} characters`);
    return value;
  }

  /** The payload sealed for this purpose and principal, with the key or the previous one; undefined for anything else. */
  async open<T>(purpose: SealPurpose, principal: string, value: unknown): Promise<T | undefined> {
    if (typeof value !== "string" || value.length > SEALED_MAX || !SEALED_SHAPE.test(value)) return undefined;
    const bytes = fromBase64Url(value.slice(VERSION.length + 1));
    if (!bytes || bytes.byteLength <= IV_BYTES) return undefined;
    for (const raw of [this.state.key, this.state.previous]) {
      if (!raw) continue;
      try {
        const plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: associated(purpose, principal) },
          await cryptoKey(raw),
          bytes.subarray(IV_BYTES),
        );
        return JSON.parse(new TextDecoder().decode(plain)) as T;
      } catch {
        // Not this key's: try the previous one.
      }
    }
    return undefined;
  }
}
