import { describe, expect } from "vitest";
import { admin, call, chatsPath, env, expectProblem, newAccount, newToken, signIn } from "../helpers";
import { it } from "../fixtures/chat";

const APP = "http://localhost:5173";
const signOut = (options: Parameters<typeof call>[2]) => call("DELETE", "/auth/token", options);

/** Signs in from the web application and returns the session cookie as a browser would send it back. */
async function cookieSignIn(account: { email: string; password: string }) {
  const r = await call("POST", "/auth/token", { body: { email: account.email, password: account.password }, headers: { origin: APP } });
  expect(r.status, r.text).toBe(200);
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

describe("DELETE /auth/token", () => {
  it("ends the bearer session but leaves the API tokens working", async ({ w }) => {
    const r = await signOut({ token: w.session });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toMatch(/^session=;.*Max-Age=0/);
    expectProblem(await call("GET", "/auth/api-tokens", { token: w.session }), 401, "unauthorized");
    expectProblem(
      await call("POST", "/auth/api-tokens", { token: w.session, body: { name: "x", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() } }),
      401,
      "unauthorized",
    );
    expect((await call("GET", chatsPath(w), { token: w.token })).status).toBe(200);
    const again = await signOut({ token: w.session });
    expectProblem(again, 401, "unauthorized");
    expect(again.headers.get("www-authenticate")).toContain("invalid_token");
  });

  it("ends only the session it is called with", async () => {
    const a = await newAccount();
    const [one, two] = [await signIn(a), await signIn(a)];
    expect((await signOut({ token: one })).status).toBe(204);
    expect((await call("GET", "/auth/api-tokens", { token: two })).status).toBe(200);
  });

  it("ends a cookie session from an allowed origin and clears the cookie", async () => {
    const a = await newAccount();
    const cookie = await cookieSignIn(a);
    const r = await signOut({ headers: { cookie, origin: APP } });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toMatch(/^session=; Max-Age=0; Path=\/auth; HttpOnly; Secure; SameSite=None; Partitioned$/);
    expect(r.headers.get("access-control-allow-origin")).toBe(APP);
    expectProblem(await call("GET", "/auth/api-tokens", { headers: { cookie, origin: APP } }), 401, "unauthorized");
  });

  it("refuses a cookie from another origin, an API token and no credential with 401", async ({ w }) => {
    const cookie = await cookieSignIn(w.account);
    expectProblem(await signOut({ headers: { cookie, origin: "https://evil.example" } }), 401, "unauthorized");
    expectProblem(await signOut({ headers: { cookie } }), 401, "unauthorized");
    expectProblem(await signOut({ token: w.token }), 401, "unauthorized");
    expectProblem(await signOut({}), 401, "unauthorized");
    expect((await call("GET", "/auth/api-tokens", { headers: { cookie, origin: APP } })).status).toBe(200);
  });

  it("lets exactly one of parallel sign-outs of the same session succeed", async ({ w }) => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => signOut({ token: w.session })));
    expect(answers.filter((r) => r.status === 204)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 204)) expectProblem(r, 401, "unauthorized");
  });
});

describe("a password change", () => {
  it("ends every session of the account, and only of that account", async ({ w }) => {
    const other = await newAccount();
    const otherSession = await signIn(other);
    const second = await signIn(w.account);
    const r = await admin("PATCH", `/admin/accounts/${w.account.id}`, { password: "a-new-long-password-1" });
    expect(r.status).toBe(200);
    for (const session of [w.session, second]) {
      expectProblem(await call("GET", "/auth/api-tokens", { token: session }), 401, "unauthorized");
      expectProblem(
        await call("POST", "/auth/api-tokens", { token: session, body: { name: "x", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() } }),
        401,
        "unauthorized",
      );
    }
    const sessions = await env.DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE account_id = ?").bind(w.account.id).first<{ n: number }>();
    expect(sessions!.n).toBe(0);
    expect((await call("GET", "/auth/api-tokens", { token: otherSession })).status).toBe(200);
    expect((await call("GET", chatsPath(w), { token: w.token })).status).toBe(200);
    const fresh = await signIn({ email: w.account.email, password: "a-new-long-password-1" });
    expect(await newToken(fresh)).toMatch(/^pct_/);
  });

  it("leaves sessions alone when only the credits change", async ({ w }) => {
    expect((await admin("PATCH", `/admin/accounts/${w.account.id}`, { credits: 5 })).status).toBe(200);
    expect((await call("GET", "/auth/api-tokens", { token: w.session })).status).toBe(200);
  });
});

describe("the session cookie", () => {
  it("is Partitioned, so a web app on another site (localhost:5173 calling 127.0.0.1:8787) keeps it", async () => {
    const a = await newAccount();
    const r = await call("POST", "/auth/token", { body: { email: a.email, password: a.password }, headers: { origin: APP } });
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^session=pcs_[0-9A-Za-z]+; /);
    for (const attribute of ["Path=/auth", "HttpOnly", "Secure", "SameSite=None", "Partitioned"]) expect(cookie.split("; ")).toContain(attribute);
    expect(cookie).toMatch(/Expires=/);
  });
});
