import { sha256Hex } from "../crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LENGTH = 32; // 32 base62 characters carry about 190 bits
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32, so any CRC32 fits

export const SESSION_PREFIX = "pcs_";
export const API_TOKEN_PREFIX = "pct_";
export type SecretPrefix = typeof SESSION_PREFIX | typeof API_TOKEN_PREFIX;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62Checksum(text: string): string {
  let n = crc32(text);
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new secret: prefix, random base62 body, and a CRC32 checksum a leak scanner can verify offline. */
export function generateSecret(prefix: SecretPrefix): string {
  const body = randomBase62(RANDOM_LENGTH);
  return prefix + body + base62Checksum(body);
}

/** True when the secret has the prefix, the shape and a matching checksum; no lookup needed. */
export function isWellFormedSecret(secret: string, prefix: SecretPrefix): boolean {
  if (!secret.startsWith(prefix) || secret.length > 200) return false;
  const rest = secret.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(rest) || rest.length < 30 + CHECKSUM_LENGTH) return false;
  const body = rest.slice(0, -CHECKSUM_LENGTH);
  return base62Checksum(body) === rest.slice(-CHECKSUM_LENGTH);
}

/** Only this hash is stored; the secret itself is shown once and never kept. */
export const hashSecret = (secret: string) => sha256Hex(secret);

/** The bearer credential of an Authorization header, if it has that form. */
export function bearerToken(header: string | undefined | null): string | undefined {
  return header?.match(/^Bearer[ ]+([^\s]+)[ ]*$/i)?.[1];
}
