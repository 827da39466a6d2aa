import { describe, expect, it, vi } from "vitest";
import { normaliseEmail } from "../../src/auth/schemas";
import { signInThrottleFor } from "../../src/auth/sign-in-throttle";
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
    for (let i = 0; i < 10; i++) expectProblem(await signIn(a.email, "wrong"), 401, "unauthorized");
    const throttled = await signIn(a.email, a.password);
    expectProblem(throttled, 429, "rate_limited");
    const retryAfter = Number(throttled.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expectProblem(await signIn(`x-${a.email}`, "wrong"), 401, "unauthorized"); // other emails are unaffected
  });

  it("checks at most 10 of 40 parallel wrong passwords; the rest get 429", async () => {
    const a = await newAccount();
    const checks = vi.spyOn(crypto.subtle, "deriveBits");
    const tries = await Promise.all(Array.from({ length: 40 }, () => signIn(a.email, "wrong-password")));
    expect(tries.filter((r) => r.status === 401)).toHaveLength(10);
    const limited = tries.filter((r) => r.status === 429);
    expect(limited).toHaveLength(30);
    expectProblem(limited[0]!, 429, "rate_limited");
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(checks).toHaveBeenCalledTimes(10);
    expectProblem(await signIn(a.email, a.password), 429, "rate_limited");
  });

  it("refuses the right password, in parallel with wrong ones, once 10 checks are under way", async () => {
    const a = await newAccount();
    // Ten checks in flight, as ten wrong passwords being hashed right now would hold them.
    const throttle = await signInThrottleFor(env, normaliseEmail(a.email), undefined);
    const inFlight = await Promise.all(Array.from({ length: 10 }, () => throttle.reserve()));
    expect(inFlight.every((slot) => slot.kind === "reserved")).toBe(true);
    const checks = vi.spyOn(crypto.subtle, "deriveBits");
    const tries = await Promise.all([...Array.from({ length: 29 }, () => signIn(a.email, "wrong-password")), signIn(a.email, a.password)]);
    for (const r of tries) expectProblem(r, 429, "rate_limited");
    expect(checks).not.toHaveBeenCalled();
  });

  it("counts failures per client address, so guesses elsewhere do not lock the owner out", async () => {
    const a = await newAccount();
    const attacker = { "cf-connecting-ip": "198.51.100.9" };
    for (let i = 0; i < 10; i++) expectProblem(await signIn(a.email, "wrong", attacker), 401, "unauthorized");
    expectProblem(await signIn(a.email, a.password, attacker), 429, "rate_limited");
    expect((await signIn(a.email, a.password, { "cf-connecting-ip": "203.0.113.20" })).status).toBe(200);
    // Without CF-Connecting-IP (local dev) every request counts as one "unknown" address.
    expect((await signIn(a.email, a.password)).status).toBe(200);
  });

  it("treats requests without CF-Connecting-IP as one unknown address", async () => {
    const a = await newAccount();
    for (let i = 0; i < 10; i++) expectProblem(await signIn(a.email, "wrong"), 401, "unauthorized");
    expectProblem(await signIn(a.email, a.password), 429, "rate_limited");
    expectProblem(await signIn(a.email, a.password, { "cf-connecting-ip": "" }), 429, "rate_limited");
    expect((await signIn(a.email, a.password, { "cf-connecting-ip": "192.0.2.1" })).status).toBe(200);
  });

  it("clears the failures after a successful sign-in", async () => {
    const a = await newAccount();
    for (let i = 0; i < 9; i++) expectProblem(await signIn(a.email, "wrong"), 401, "unauthorized");
    expect((await signIn(a.email, a.password)).status).toBe(200);
    for (let i = 0; i < 10; i++) expectProblem(await signIn(a.email, "wrong"), 401, "unauthorized");
    expectProblem(await signIn(a.email, "wrong"), 429, "rate_limited");
  });

  it("rejects malformed input with 400", async () => {
    expectProblem(await call("POST", "/auth/token", { body: { email: "a@b.c" } }), 400, "invalid_request");
    expectProblem(await call("POST", "/auth/token", { raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expectProblem(await call("POST", "/auth/token", { raw: "email=a", headers: { "content-type": "application/x-www-form-urlencoded" } }), 400, "invalid_request");
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
