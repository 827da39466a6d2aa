import { describe, expect, it } from "vitest";
import { hashPassword, PBKDF2_ITERATIONS, verifyPassword } from "../../src/auth/passwords";
import { API_TOKEN_PREFIX, SESSION_PREFIX, bearerToken, generateSecret, isWellFormedSecret } from "../../src/auth/secrets";

describe("secrets", () => {
  it("are the prefix, 32 random base62 characters and a 6-character checksum", () => {
    const token = generateSecret(API_TOKEN_PREFIX);
    expect(token).toMatch(/^pct_[0-9A-Za-z]{38}$/);
    expect(generateSecret(SESSION_PREFIX)).toMatch(/^pcs_[0-9A-Za-z]{38}$/);
    expect(new Set(Array.from({ length: 100 }, () => generateSecret(API_TOKEN_PREFIX))).size).toBe(100);
  });

  it("verify their checksum offline, and any changed character fails it", () => {
    const token = generateSecret(API_TOKEN_PREFIX);
    expect(isWellFormedSecret(token, API_TOKEN_PREFIX)).toBe(true);
    for (const i of [4, 20, token.length - 1]) {
      const changed = token.slice(0, i) + (token[i] === "a" ? "b" : "a") + token.slice(i + 1);
      expect(isWellFormedSecret(changed, API_TOKEN_PREFIX)).toBe(false);
    }
    expect(isWellFormedSecret(token, SESSION_PREFIX)).toBe(false);
    expect(isWellFormedSecret("pct_notarealtoken000000000000000000000", API_TOKEN_PREFIX)).toBe(false);
    expect(isWellFormedSecret(`pct_${"a".repeat(500)}`, API_TOKEN_PREFIX)).toBe(false);
  });

  it("are read from a Bearer Authorization header only", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe("passwords", () => {
  it("are stored as PBKDF2-SHA256 with a per-password salt and the iteration count recorded", async () => {
    const a = await hashPassword("correct horse");
    const b = await hashPassword("correct horse");
    expect(a).toMatch(new RegExp(`^pbkdf2-sha256\\$${PBKDF2_ITERATIONS}\\$[A-Za-z0-9+/=]+\\$[A-Za-z0-9+/=]+$`));
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse", a)).toBe(true);
    expect(await verifyPassword("wrong horse", a)).toBe(false);
    expect(await verifyPassword("correct horse", undefined)).toBe(false);
  });

  it("still verifies hashes stored with another iteration count, so the count can be raised later", async () => {
    const salt = new Uint8Array(16);
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("old password"), "PBKDF2", false, ["deriveBits"]);
    const bits = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: 1000 }, key, 256));
    const stored = `pbkdf2-sha256$1000$${btoa(String.fromCharCode(...salt))}$${btoa(String.fromCharCode(...bits))}`;
    expect(await verifyPassword("old password", stored)).toBe(true);
    expect(await verifyPassword("old password", stored.replace("$1000$", "$5000000$"))).toBe(false);
  });
});
