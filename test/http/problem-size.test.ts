import { describe, expect } from "vitest";
import { FIELD_PROBLEMS_MAX, FIELD_TEXT_MAX_BYTES } from "../../src/http/problem";
import { call, chatsPath, expectProblem, world } from "../helpers";
import { it } from "../fixtures/chat";

/** A body with thousands of unknown fields, one with a name of 50,000 characters and one of emoji that a cut could split. */
function hostileBody(extra: Record<string, unknown>) {
  const body: Record<string, unknown> = { ...extra };
  body["k".repeat(50_000)] = 1;
  body["😀".repeat(150)] = 1;
  for (let i = 0; i < 5_000; i++) body[`k${i}`] = i;
  return body;
}

const jsonBytes = (text: string) => new TextEncoder().encode(JSON.stringify(text)).byteLength - 2;

describe("a validation problem's size", () => {
  it.each([
    [
      "an API token's chat creation",
      async () => {
        const w = await world();
        return call("POST", chatsPath(w), { token: w.token, body: hostileBody({ title: "x" }) });
      },
    ],
    ["a sign-in, which needs no credentials", async () => call("POST", "/auth/token", { body: hostileBody({ email: "a@example.test", password: "p" }) })],
  ])("lists at most 20 short errors and stays under 16 KB: %s", async (_, request) => {
    const r = await request();
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toHaveLength(FIELD_PROBLEMS_MAX);
    expect(r.json.detail).toMatch(/5002 problems; the first 20 are listed/);
    for (const e of r.json.errors as { path: string; message: string }[]) {
      expect(jsonBytes(e.path)).toBeLessThanOrEqual(FIELD_TEXT_MAX_BYTES);
      expect(e.path.isWellFormed()).toBe(true);
    }
    expect(r.json.errors[0].path).toBe("k".repeat(300));
    expect(r.json.errors[1].path).toBe("😀".repeat(75));
    expect(new TextEncoder().encode(r.text).byteLength).toBeLessThan(16_384);
  });

  it("counts a path by its bytes as sent, so keys of control characters (six bytes each in JSON) stay small too", async () => {
    const body: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) body[`${"\u0001".repeat(5_000)}${i}`] = i;
    const r = await call("POST", "/auth/token", { body: { email: "a@example.test", password: "p", ...body } });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toHaveLength(FIELD_PROBLEMS_MAX);
    expect(r.json.errors[0].path).toBe("\u0001".repeat(FIELD_TEXT_MAX_BYTES / 6));
    expect(new TextEncoder().encode(r.text).byteLength).toBeLessThan(16_384);
  });

  it("lists every error when there are few", async ({ w }) => {
    const r = await call("POST", chatsPath(w), { token: w.token, body: { title: "", color: "blue" } });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toHaveLength(2);
    expect(r.json.detail).toBe("The request body is invalid.");
  });
});
