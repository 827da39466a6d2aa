import { fromBase64, toBase64 } from "../crypto";

const encoder = new TextEncoder();
// Workers' WebCrypto refuses PBKDF2 above 100000 iterations; the stored format records the count so it can rise later.
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, HASH_BITS));
}

/** Format: pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return `pbkdf2-sha256$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(await derive(password, salt, PBKDF2_ITERATIONS))}`;
}

// Verified against when the email is unknown, so both failures take the same time.
const DECOY_HASH = `pbkdf2-sha256$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [algorithm, iterations, salt, hash] = (stored ?? DECOY_HASH).split("$");
  const count = Number(iterations);
  // Above the runtime's cap deriveBits fails in production (workerd #1346); refuse such a hash outright.
  if (algorithm !== "pbkdf2-sha256" || !Number.isInteger(count) || count < 1 || count > PBKDF2_ITERATIONS || !salt || !hash) return false;
  const expected = fromBase64(hash);
  const actual = await derive(password, fromBase64(salt), count);
  return crypto.subtle.timingSafeEqual(actual, expected) && stored !== undefined;
}
