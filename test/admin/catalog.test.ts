import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { CatalogDocument } from "../../src/catalog/schema";
import { catalogFixture, ids } from "../fixtures/catalog";
import { admin, call, env, expectProblem } from "../helpers";

describe("admin access", () => {
  it("refuses a missing or wrong admin token with 401", async () => {
    expectProblem(await call("GET", "/admin/catalog"), 401, "unauthorized");
    expectProblem(await call("PUT", "/admin/catalog", { token: "wrong", body: catalogFixture() }), 401, "unauthorized");
  });

  it("answers 404 for everything under /admin when ADMIN_TOKEN is unset", async () => {
    const app = createApp();
    const unset = { ...env, ADMIN_TOKEN: undefined };
    for (const [method, path] of [
      ["GET", "/admin/catalog"],
      ["PUT", "/admin/catalog"],
      ["POST", "/admin/anything"],
    ] as const) {
      const r = await app.fetch(new Request(`https://s.test${path}`, { method, headers: { authorization: "Bearer " } }), unset, createExecutionContext());
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(((await r.json()) as { code: string }).code).toBe("not_found");
    }
  });
});

describe("PUT /admin/catalog", () => {
  it("stores the document and GET returns it with defaults filled in", async () => {
    expect((await admin("PUT", "/admin/catalog", catalogFixture())).status).toBe(204);
    const r = await admin("GET", "/admin/catalog");
    expect(r.status).toBe(200);
    expect(r.json).toEqual(CatalogDocument.parse(catalogFixture()));
    expect(r.json.plans.map((p: { id: string }) => p.id)).toEqual([ids.planB, ids.planA, ids.planInactive]);
    expect(r.json.chatBanners[1].archived).toBe(true);
  });

  it("round-trips an export back through import unchanged", async () => {
    await admin("PUT", "/admin/catalog", catalogFixture());
    const exported = (await admin("GET", "/admin/catalog")).json;
    expect((await admin("PUT", "/admin/catalog", exported)).status).toBe(204);
    expect((await admin("GET", "/admin/catalog")).json).toEqual(exported);
  });

  it("answers 404 from GET before any catalog is loaded", async () => {
    await env.DB.exec("DELETE FROM catalog_free_plan");
    expectProblem(await admin("GET", "/admin/catalog"), 404, "not_found");
  });

  it("lists every problem of an invalid document and changes nothing", async () => {
    await admin("PUT", "/admin/catalog", catalogFixture());
    const before = (await admin("GET", "/admin/catalog")).json;
    const doc = catalogFixture() as any;
    doc.freePlan.mainColor = "";
    doc.plans[0].id = "not-a-uuid";
    doc.chatBanners[0].iconColor = "#FF8800";
    doc.pageTopBanners[0].banner.weight = 2 ** 31;
    doc.privacyPolicy.contentMarkdownRu = "x".repeat(100_001);
    doc.freePlan.availableFunctions = ["canFly"];
    doc.plans[1].unknownField = true;
    const r = await admin("PUT", "/admin/catalog", doc);
    expectProblem(r, 400, "invalid_request");
    const paths = r.json.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "freePlan.mainColor",
        "plans.0.id",
        "chatBanners.0.iconColor",
        "pageTopBanners.0.banner.weight",
        "privacyPolicy.contentMarkdownRu",
        "freePlan.availableFunctions.0",
        "plans.1.unknownField",
      ]),
    );
    expect((await admin("GET", "/admin/catalog")).json).toEqual(before);
  });

  it("checks the questionnaire as a graph", async () => {
    const doc = catalogFixture() as any;
    doc.poll.definition.startQuestionId = "12345678-1234-4234-8234-123456789012";
    doc.poll.definition.questions[0].nextQuestionId = "12345678-1234-4234-8234-123456789013";
    doc.poll.definition.questions[1].options[0].id = ids.o1;
    doc.poll.definition.questions[0].options[0].nextQuestionId = "12345678-1234-4234-8234-123456789014";
    const r = await admin("PUT", "/admin/catalog", doc);
    expectProblem(r, 400, "invalid_request");
    const paths = r.json.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "poll.definition.startQuestionId",
        "poll.definition.questions.0.nextQuestionId",
        "poll.definition.questions.1.options.0.id",
        "poll.definition.questions.0.options.0.nextQuestionId",
      ]),
    );
  });

  it("rejects duplicate ids, a page-top banner without its banner object and a bad link", async () => {
    const doc = catalogFixture() as any;
    doc.plans[1].id = doc.plans[0].id;
    delete doc.pageTopBanners[0].banner;
    doc.chatBanners[0].linkUrl = "javascript:alert(1)";
    const r = await admin("PUT", "/admin/catalog", doc);
    expectProblem(r, 400, "invalid_request");
    const paths = r.json.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["pageTopBanners.0.banner", "chatBanners.0.linkUrl"]));
    const dup = catalogFixture() as any;
    dup.plans[1].id = dup.plans[0].id;
    expect((await admin("PUT", "/admin/catalog", dup)).json.errors[0]).toMatchObject({ path: "plans.1.id", message: expect.stringContaining("duplicate") });
  });

  it("accepts legal texts of exactly 100000 characters in every language", async () => {
    const doc = catalogFixture();
    const long = "я".repeat(100_000);
    doc.termsOfUse = { contentMarkdownEn: long, contentMarkdownRu: long, contentMarkdownEs: long, acceptanceUpdateTitle: "" };
    expect((await admin("PUT", "/admin/catalog", doc)).status).toBe(204);
    const r = await call("GET", "/v1/terms-of-use", { headers: { "accept-language": "ru" } });
    expect(r.json.contentMarkdown).toHaveLength(100_000);
  });

  it("rejects a body that is not JSON", async () => {
    expectProblem(await call("PUT", "/admin/catalog", { token: "test-admin-token", raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expectProblem(await call("PUT", "/admin/catalog", { token: "test-admin-token", raw: "x", headers: { "content-type": "text/plain" } }), 400, "invalid_request");
  });
});

describe("accounts and projects", () => {
  it("refuses a second account with the same email in any case with 409", async () => {
    const email = `dup-${crypto.randomUUID()}@example.test`;
    expect((await admin("POST", "/admin/accounts", { email, password: "password-1" })).status).toBe(201);
    expectProblem(await admin("POST", "/admin/accounts", { email: email.toUpperCase(), password: "password-2" }), 409, "conflict");
  });

  it("refuses a second project with the same id and an unknown owner", async () => {
    const owner = (await admin("POST", "/admin/accounts", { email: `o-${crypto.randomUUID()}@example.test`, password: "password-1" })).json;
    const id = crypto.randomUUID();
    expect((await admin("POST", "/admin/projects", { id, name: "p", ownerAccountId: owner.id })).status).toBe(201);
    expectProblem(await admin("POST", "/admin/projects", { id: id.toUpperCase(), name: "p", ownerAccountId: owner.id }), 409, "conflict");
    expectProblem(await admin("POST", "/admin/projects", { name: "p", ownerAccountId: crypto.randomUUID() }), 400, "invalid_request");
    expectProblem(await admin("PUT", `/admin/projects/${crypto.randomUUID()}/members/${owner.id}`, { role: "viewer" }), 404, "not_found");
    expectProblem(await admin("PATCH", `/admin/accounts/${crypto.randomUUID()}`, { credits: 5 }), 404, "not_found");
  });
});
