import { describe, expect } from "vitest";
import { admin, call, chatsPath, expectProblem, newAccount, newToken, signIn } from "../helpers";
import { it } from "../fixtures/chat";

describe("PUT /admin/projects/{id}/members/{accountId}", () => {
  it("refuses to change the owner's own role with 409, and the owner keeps writing", async ({ w }) => {
    const r = await admin("PUT", `/admin/projects/${w.projectId}/members/${w.account.id}`, { role: "viewer" });
    expectProblem(r, 409, "conflict");
    expect(r.json.detail).toContain("owns the project");
    expect((await call("POST", chatsPath(w), { token: w.token, body: { title: "still mine" } })).status).toBe(201);
  });

  it("sets the role of another account", async ({ w }) => {
    const viewer = await newAccount();
    const r = await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" });
    expect(r.status).toBe(200);
    expectProblem(await call("POST", chatsPath(w), { token: await newToken(await signIn(viewer)), body: { title: "no" } }), 403, "forbidden");
  });
});

describe("GET /admin/accounts", () => {
  it("finds an account by email, in any case", async () => {
    const a = await newAccount(42);
    const r = await admin("GET", `/admin/accounts?email=${encodeURIComponent(a.email.toUpperCase())}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ items: [{ id: a.id, email: a.email, credits: 42 }] });
    expect((await admin("GET", "/admin/accounts?email=nobody%40example.test")).json).toEqual({ items: [] });
  });

  it("lists accounts in email order, a page at a time", async () => {
    await newAccount();
    await newAccount();
    const first = await admin("GET", "/admin/accounts?limit=1");
    expect(first.json.items).toHaveLength(1);
    const next = await admin("GET", `/admin/accounts?limit=1&after=${encodeURIComponent(first.json.items[0].email)}`);
    expect(next.json.items[0].email > first.json.items[0].email).toBe(true);
  });

  it("refuses a malformed email, a bad limit or an unknown parameter with 400, and callers without the token with 401", async () => {
    for (const query of ["email=not-an-email", "limit=0", "limit=1001", "role=owner"]) expectProblem(await admin("GET", `/admin/accounts?${query}`), 400, "invalid_request");
    expectProblem(await call("GET", "/admin/accounts"), 401, "unauthorized");
  });
});
