import { describe, expect } from "vitest";
import { ProjectList } from "../../src/projects/schemas";
import { admin, call, expectProblem, newAccount, newToken, signIn } from "../helpers";
import { it } from "../fixtures/chat";

const listProjects = (token?: string, query = "") => call("GET", `/v1/projects${query}`, { token });

describe("GET /v1/projects", () => {
  it("lists the active projects the account is a member of, by name, with its role in each", async ({ w }) => {
    const other = await newAccount();
    const project = async (name: string, ownerAccountId: string) => {
      const r = await admin("POST", "/admin/projects", { name, ownerAccountId });
      expect(r.status, r.text).toBe(201);
      return r.json.id as string;
    };
    const asViewer = await project("Alpha", other.id);
    const asEditor = await project("beta", other.id);
    const suspended = await project("Aardvark", w.account.id);
    const notMine = await project("Aaa", other.id);
    expect((await admin("PUT", `/admin/projects/${asViewer}/members/${w.account.id}`, { role: "viewer" })).status).toBe(200);
    expect((await admin("PUT", `/admin/projects/${asEditor}/members/${w.account.id}`, { role: "editor" })).status).toBe(200);
    expect((await admin("PATCH", `/admin/projects/${suspended}`, { status: "suspended" })).status).toBe(200);
    const r = await listProjects(w.token);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("ratelimit")).toMatch(/r=\d+/);
    const { items } = ProjectList.parse(r.json);
    // Ordered by name as stored (binary order: capitals first); suspended and foreign projects are left out.
    expect(items).toEqual([
      { id: asViewer, name: "Alpha", role: "viewer" },
      { id: asEditor, name: "beta", role: "editor" },
      { id: w.projectId, name: "test project", role: "owner" },
    ]);
    expect(items.map((p) => p.id)).not.toContain(notMine);
  });

  it("answers an empty list for an account with no projects", async () => {
    const account = await newAccount();
    const token = await newToken(await signIn(account));
    const r = await listProjects(token);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ items: [] });
  });

  it("needs a personal API token with chat:read", async ({ w }) => {
    expectProblem(await listProjects(), 401, "unauthorized");
    expectProblem(await listProjects(w.session), 401, "unauthorized");
    const writeOnly = await newToken(w.session, ["chat:write"]);
    const r = await listProjects(writeOnly);
    expectProblem(r, 403, "insufficient_scope");
    expect(r.headers.get("www-authenticate")).toContain('scope="chat:read"');
  });

  it("refuses query parameters with 400", async ({ w }) => {
    expectProblem(await listProjects(w.token, "?limit=5"), 400, "invalid_request");
  });

  it("answers 405 with Allow for another method", async ({ w }) => {
    const r = await call("POST", "/v1/projects", { token: w.token, body: {} });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toContain("GET");
  });
});

describe("the OpenAPI entry", () => {
  it("documents GET /v1/projects as listProjects", async () => {
    const doc = (await call("GET", "/v1/openapi.json")).json;
    const op = doc.paths["/v1/projects"].get;
    expect(op.operationId).toBe("listProjects");
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ProjectList" });
  });
});
