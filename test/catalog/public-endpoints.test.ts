import { beforeEach, describe, expect, it } from "vitest";
import { ChatBanner, LegalDocument, PageTopBanner, PlanCatalog, PollResponse } from "../../src/catalog/schema";
import { catalogFixture, ids } from "../fixtures/catalog";
import { invalidateCatalogCache } from "../../src/catalog/cache";
import { admin, call, env, expectProblem } from "../helpers";

const PATHS = ["/v1/plans", "/v1/privacy-policy", "/v1/terms-of-use", "/v1/chat-banners", "/v1/chat-banners/page-top", "/v1/poll"];
const get = (path: string, language?: string, headers: Record<string, string> = {}) =>
  call("GET", path, { headers: language ? { "accept-language": language, ...headers } : headers });

beforeEach(async () => {
  expect((await admin("PUT", "/admin/catalog", catalogFixture())).status).toBe(204);
});

describe("GET /v1/plans", () => {
  it("serves the free plan and the active paid plans in catalog order", async () => {
    const r = await get("/v1/plans", "en");
    expect(r.status).toBe(200);
    const body = PlanCatalog.parse(r.json);
    expect(body.freePlan).toMatchObject({ title: "Free", monthlyCredits: 50, maxAppsPerProject: null });
    expect(body.plans.map((p) => p.id)).toEqual([ids.planA, ids.planB]);
    expect(body.plans[0]!.durations.map((d) => d.id)).toEqual(["m1", "m12"]);
    expect(body.plans[1]!.durations[0]!.creditOptions[0]).toMatchObject({ isNegotiatedPrice: true, credits: null, price: null });
  });

  it("answers 503 while no catalog is loaded; the other endpoints answer as unpublished", async () => {
    await env.DB.batch(
      [
        "catalog_poll_options",
        "catalog_poll_questions",
        "catalog_poll",
        "catalog_banners",
        "catalog_legal_documents",
        "catalog_plan_credit_options",
        "catalog_plan_durations",
        "catalog_paid_plans",
        "catalog_free_plan",
      ].map((t) => env.DB.prepare(`DELETE FROM ${t}`)),
    );
    await invalidateCatalogCache();
    const plans = await get("/v1/plans");
    expectProblem(plans, 503, "service_unavailable");
    expect(plans.headers.get("retry-after")).toBe("60");
    expect((await get("/v1/privacy-policy")).json).toMatchObject({ contentMarkdown: "", acceptanceUpdateTitle: "" });
    expect((await get("/v1/chat-banners")).json).toEqual([]);
    expect((await get("/v1/poll")).json).toEqual({ poll: null });
  });
});

describe("language", () => {
  it("selects the language from Accept-Language, with q-values and regions", async () => {
    expect((await get("/v1/plans", "ru-RU")).json.freePlan.title).toBe("Бесплатный");
    expect((await get("/v1/plans", "de, es;q=0.5")).json.freePlan.title).toBe("Gratis");
    expect((await get("/v1/plans", "xx")).json.freePlan.title).toBe("Free");
    expect((await get("/v1/plans")).json.freePlan.title).toBe("Free");
  });

  it("ignores a locale query parameter", async () => {
    expect((await get("/v1/plans?locale=ru")).json.freePlan.title).toBe("Free");
  });

  it("names the chosen language and varies by Accept-Language on every endpoint", async () => {
    for (const path of PATHS) {
      const r = await get(path, "es-ES,ru;q=0.9");
      expect(r.status, path).toBe(200);
      expect(r.headers.get("content-language"), path).toBe("es");
      expect(r.headers.get("vary"), path).toMatch(/accept-language/i);
      expect(r.headers.get("content-type"), path).toMatch(/^application\/json/);
    }
  });
});

describe("legal documents", () => {
  it("serves the privacy policy in the request language with no-store", async () => {
    const r = await get("/v1/privacy-policy", "ru");
    expect(LegalDocument.parse(r.json)).toEqual({
      contentMarkdown: "# Конфиденциальность",
      contentMarkdownEn: "# Privacy",
      contentMarkdownRu: "# Конфиденциальность",
      contentMarkdownEs: "",
      acceptanceUpdateTitle: "Privacy update",
    });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("falls back across languages for the terms of use", async () => {
    const r = await get("/v1/terms-of-use", "en");
    expect(r.json.contentMarkdown).toBe("# Términos");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });
});

describe("banners", () => {
  it("lists active chat banners only, as a bare array", async () => {
    const r = await get("/v1/chat-banners", "ru");
    const banners = ChatBanner.array().parse(r.json);
    expect(banners.map((b) => b.id)).toEqual([ids.bannerChat]);
    expect(banners[0]).toMatchObject({ contentMarkdown: "Привет", iconColor: "#ff8800", linkUrl: "http://localhost:5173/pricing" });
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
  });

  it("lists active page-top banners with their banner object, separately from chat banners", async () => {
    const r = await get("/v1/chat-banners/page-top", "es");
    const banners = PageTopBanner.array().parse(r.json);
    expect(banners.map((b) => b.id)).toEqual([ids.bannerTop]);
    expect(banners[0]).toMatchObject({ contentMarkdown: "Arriba", linkUrl: "", banner: { backgroundColor: "#000000", textColor: "#ffffff", weight: 5 } });
  });

  it("answers an empty array when there are no banners", async () => {
    expect((await admin("PUT", "/admin/catalog", { ...catalogFixture(), chatBanners: [], pageTopBanners: [] })).status).toBe(204);
    expect((await get("/v1/chat-banners")).json).toEqual([]);
    expect((await get("/v1/chat-banners/page-top")).json).toEqual([]);
  });
});

describe("GET /v1/poll", () => {
  it("serves the enabled questionnaire with no-store", async () => {
    const r = await get("/v1/poll", "ru");
    const { poll } = PollResponse.parse(r.json);
    expect(poll?.revision).toBe(3);
    expect(poll?.definition?.title).toBe("Расскажите");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("answers { poll: null } at once after the questionnaire is disabled", async () => {
    await get("/v1/poll", "en");
    const doc = catalogFixture();
    doc.poll.definition.enabled = false;
    expect((await admin("PUT", "/admin/catalog", doc)).status).toBe(204);
    expect((await get("/v1/poll", "en")).json).toEqual({ poll: null });
    expect((await admin("PUT", "/admin/catalog", { ...catalogFixture(), poll: null })).status).toBe(204);
    expect((await get("/v1/poll", "en")).json).toEqual({ poll: null });
  });
});

describe("HTTP behaviour of the public endpoints", () => {
  it("answers 304 to a matching If-None-Match, with the same strong ETag", async () => {
    const first = await get("/v1/plans", "ru");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await get("/v1/plans", "ru", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    expect((await get("/v1/plans", "ru", { "if-none-match": `"other", W/${etag}` })).status).toBe(304);
    expect((await get("/v1/plans", "en", { "if-none-match": etag })).status).toBe(200);
  });

  it("gives each language its own ETag", async () => {
    const en = (await get("/v1/plans", "en")).headers.get("etag");
    const ru = (await get("/v1/plans", "ru")).headers.get("etag");
    expect(en).not.toBe(ru);
  });

  it("allows any origin without credentials", async () => {
    const r = await get("/v1/plans", "en", { origin: "https://elsewhere.example" });
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("answers preflight with 204, no body and the allowed methods", async () => {
    for (const path of PATHS) {
      const r = await call("OPTIONS", path, { headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" } });
      expect(r.status, path).toBe(204);
      expect(r.text).toBe("");
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("answers HEAD with the headers and no body", async () => {
    const r = await call("HEAD", "/v1/plans");
    expect(r.status).toBe(200);
    expect(r.text).toBe("");
    expect(r.headers.get("content-type")).toMatch(/json/);
    expect(r.headers.get("etag")).toBeTruthy();
  });

  it("answers other methods with 405 and Allow", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const r = await call(method, "/v1/plans");
      expectProblem(r, 405, "method_not_allowed");
      expect(r.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    }
  });

  it("answers 404 for the removed /public routes, without redirecting", async () => {
    for (const path of [
      "/public/plans",
      "/public/privacy-policy",
      "/public/terms-of-use",
      "/public/chat-banners",
      "/public/chat-banners/page-top",
      "/public/poll",
      "/public/documents",
    ]) {
      const r = await call("GET", path);
      expectProblem(r, 404, "not_found");
      expect(r.headers.get("location")).toBeNull();
    }
  });
});
