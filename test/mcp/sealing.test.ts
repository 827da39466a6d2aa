import { describe, expect, it, vi } from "vitest";
import { config } from "../../src/config";
import type { Env } from "../../src/env";
import { log } from "../../src/log";
import { Sealer } from "../../src/mcp/sealing";

const KEY = "dGVzdC1tY3Atc3RhdGUta2V5LTMyLWJ5dGVzLWxvbmc";
const OTHER = "YW5vdGhlci1tY3Atc3RhdGUta2V5LTMyLWJ5dGVzISE";
const stateOf = (vars: Partial<Env>) => config({ ...vars } as Env).mcpState;

describe("MCP_STATE_KEY and its sealed values", () => {
  it("offers nothing when the key is unset, and logs one error (never the value) when it is not 32 bytes of base64url", () => {
    expect(stateOf({})).toBeUndefined();
    const error = vi.spyOn(log, "error").mockImplementation(() => {});
    expect(stateOf({ MCP_STATE_KEY: "short-secret-value" })).toBeUndefined();
    expect(error).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(error.mock.calls)).not.toContain("short-secret-value");
  });

  it("takes MCP_INPUT_TTL_SECONDS from 1 to 86400, 3600 otherwise", () => {
    expect(stateOf({ MCP_STATE_KEY: KEY })?.inputTtlMs).toBe(3_600_000);
    expect(stateOf({ MCP_STATE_KEY: KEY, MCP_INPUT_TTL_SECONDS: "60" })?.inputTtlMs).toBe(60_000);
    for (const bad of ["0", "86401", "1.5", "soon"]) expect(stateOf({ MCP_STATE_KEY: KEY, MCP_INPUT_TTL_SECONDS: bad })?.inputTtlMs, bad).toBe(3_600_000);
  });

  it("opens a value only for its purpose and principal, never a tampered one, and with the previous key after a rotation", async () => {
    const sealer = new Sealer(stateOf({ MCP_STATE_KEY: KEY })!);
    const payload = { chat: crypto.randomUUID(), n: 1 };
    const sealed = await sealer.seal("task", "token:a", payload);
    expect(sealed).toMatch(/^[A-Za-z0-9._~-]{1,1024}$/);
    expect(sealed).not.toContain(payload.chat);
    expect(await sealer.open("task", "token:a", sealed)).toEqual(payload);
    expect(await sealer.open("task", "token:b", sealed)).toBeUndefined();
    expect(await sealer.open("request-state", "token:a", sealed)).toBeUndefined();
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1);
    expect(await sealer.open("task", "token:a", flipped)).toBeUndefined();
    for (const junk of [undefined, 42, "", "v1.", "v2.abc", "x".repeat(2000)]) expect(await sealer.open("task", "token:a", junk)).toBeUndefined();

    const rotated = new Sealer(stateOf({ MCP_STATE_KEY: OTHER, MCP_STATE_KEY_PREVIOUS: KEY })!);
    expect(await rotated.open("task", "token:a", sealed)).toEqual(payload);
    // A new key alone invalidates what the old one sealed.
    expect(await new Sealer(stateOf({ MCP_STATE_KEY: OTHER })!).open("task", "token:a", sealed)).toBeUndefined();
  });
});
