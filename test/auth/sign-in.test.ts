import { describe, expect, it } from "vitest";
import { call, env, expectProblem, newAccount } from "../helpers";

const signIn = (email: string, password: string, headers: Record<string, string> = {}) => call("POST", "/auth/token", { body: { email, password }, headers });

describe("POST /auth/token", () => {
  it("gives a session token, stored only as a hash", async () => {
    const a = await newAccount();
    const r = await signIn(a.email.toUpperCase(), a.password);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ token: expect.stringMatching(/^pcs_/), tokenType: "Bearer", expiresAt: expect.stringMatching(/Z$/) });
    const rows = await env.DB.prepare("SELECT * FROM sessions").all();
    expect(JSON.stringify(rows.results)).not.toContain(r.json.token);
  });

  it("answers unknown email and wrong password with the same 401", async () => {
    const a = await newAccount();
    const wrong = await signIn(a.email, "wrong-password");
    const unknown = await signIn("nobody@example.test", "wrong-password");
    expectProblem(wrong, 401, "unauthorized");
    expectProblem(unknown, 401, "unauthorized");
    expect(unknown.json.detail).toBe(wrong.json.detail);
  });

  it("throttles an email after 10 failures in 15 minutes, even with the right password", async () => {
    const a = await newAccount();
    for (let i = 0; i < 10; i++) expect((await signIn(a.email, "wrong")).status).toBe(401);
    const throttled = await signIn(a.email, a.password);
    expectProblem(throttled, 429, "rate_limited");
    const retryAfter = Number(throttled.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect((await signIn(`x-${a.email}`, "wrong")).status).toBe(401); // other emails are unaffected
  });

  it("rejects malformed input with 400", async () => {
    expectProblem(await call("POST", "/auth/token", { body: { email: "a@b.c" } }), 400, "invalid_request");
    expectProblem(await call("POST", "/auth/token", { raw: "{", headers: { "content-type": "application/json" } }), 400);
    expectProblem(await call("POST", "/auth/token", { raw: "email=a", headers: { "content-type": "application/x-www-form-urlencoded" } }), 400);
  });

  it("sets the session cookie for an allowed web-application origin only", async () => {
    const a = await newAccount();
    const fromApp = await signIn(a.email, a.password, { origin: "http://localhost:5173" });
    expect(fromApp.headers.get("set-cookie")).toMatch(/^session=pcs_[^;]+;.*HttpOnly/);
    expect(fromApp.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(fromApp.headers.get("access-control-allow-credentials")).toBe("true");
    expect(fromApp.headers.get("access-control-expose-headers")).toContain("x-request-id");
    const fromElsewhere = await signIn(a.email, a.password, { origin: "https://evil.example" });
    expect(fromElsewhere.headers.get("set-cookie")).toBeNull();
    expect(fromElsewhere.headers.get("access-control-allow-origin")).toBeNull();
  });
});
