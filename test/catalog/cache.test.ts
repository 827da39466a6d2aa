import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { frozenClock } from "../clock";
import { catalogFixture } from "../fixtures/catalog";
import { admin, call, env } from "../helpers";

const plansIn = (language: string) => call("GET", "/v1/plans", { headers: { "accept-language": language } });

beforeEach(async () => {
  expect((await admin("PUT", "/admin/catalog", catalogFixture())).status).toBe(204);
});
describe("catalog cache", () => {
  it("says where each rendering came from in Server-Timing", async () => {
    // dur is Date.now() - start: with the real clock a memory hit read 1 ms whenever it crossed a millisecond.
    const clock = frozenClock();
    expect((await plansIn("ru")).headers.get("server-timing")).toBe("catalog;desc=d1;dur=0");
    expect((await plansIn("ru")).headers.get("server-timing")).toBe("catalog;desc=memory;dur=0");
    expect((await plansIn("es")).headers.get("server-timing")).toBe("catalog;desc=render;dur=0"); // the document is loaded once
    clock.advance(31_000);
    expect((await plansIn("es")).headers.get("server-timing"), "stale after CATALOG_CACHE_SECONDS").toBe("catalog;desc=d1;dur=0");
  });

  it("serves a warm request without reading D1", async () => {
    const warm = await plansIn("ru");
    // Emptied behind the cache's back: only a request that reads D1 could notice.
    await env.DB.exec("DELETE FROM catalog_paid_plans");
    const again = await plansIn("ru");
    expect(again.status).toBe(200);
    expect(again.json.plans).toHaveLength(2);
    expect(again.headers.get("etag")).toBe(warm.headers.get("etag"));
  });

  it("keys renderings by the normalised language, not the raw header", async () => {
    const first = await plansIn("ru-RU,ru;q=0.9");
    await env.DB.exec("DELETE FROM catalog_paid_plans");
    const second = await plansIn("ru");
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  it("stores each rendering in the Cache API for other isolates of the colo", async () => {
    // The write happens in waitUntil, after the response went out: the test holds the context to wait for it.
    const ctx = createExecutionContext();
    const r = await worker.fetch(new Request("https://service.test/v1/plans", { headers: { "accept-language": "es" } }), env, ctx);
    const text = await r.text();
    await waitOnExecutionContext(ctx);
    const cached = await (await caches.open("catalog")).match("https://catalog.cache.internal/plans/es");
    expect(cached).toBeDefined();
    expect(cached!.headers.get("etag")).toBe(r.headers.get("etag"));
    expect(cached!.headers.get("cache-control")).toBe("max-age=30");
    expect(await cached!.text()).toBe(text);
  });

  it("reads D1 again once CATALOG_CACHE_SECONDS have passed", async () => {
    await plansIn("en");
    await env.DB.exec("UPDATE catalog_free_plan SET title_en = 'Changed behind the cache'");
    expect((await plansIn("en")).json.freePlan.title).toBe("Free");
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 31_000);
    expect((await plansIn("en")).json.freePlan.title).toBe("Changed behind the cache");
  });

  it("shows an admin change at once on the instance that took it", async () => {
    await plansIn("en");
    const doc = catalogFixture();
    doc.freePlan.titleEn = "Renamed";
    expect((await admin("PUT", "/admin/catalog", doc)).status).toBe(204);
    expect((await plansIn("en")).json.freePlan.title).toBe("Renamed");
  });

  it("ages a rendering from the catalog's read, so one rendered late from an old read is not served as new", async () => {
    const clock = frozenClock();
    await plansIn("en"); // reads the catalog and keeps it
    await env.DB.exec("UPDATE catalog_free_plan SET title_en = 'Changed', title_ru = 'Changed', title_es = 'Changed'");
    clock.advance(29_000);
    expect((await plansIn("es")).json.freePlan.title, "rendered now from the catalog read 29 s ago").not.toBe("Changed");
    clock.advance(1_500);
    expect((await plansIn("es")).json.freePlan.title, "30 s after the read, whenever it was rendered").toBe("Changed");
  });

  it("ignores, on the instance that took a change, the old catalog another isolate stores in the colo after it", async () => {
    const clock = frozenClock();
    const old = await plansIn("en");
    const doc = catalogFixture();
    doc.freePlan.titleEn = "Renamed";
    expect((await admin("PUT", "/admin/catalog", doc)).status).toBe(204);
    // Another isolate read the catalog before the change; its store lands after this isolate cleared the colo.
    const late = new Response(old.text, { headers: { etag: old.headers.get("etag")!, "x-read-at": String(clock.now() - 1_000), "cache-control": "max-age=30" } });
    await (await caches.open("catalog")).put("https://catalog.cache.internal/plans/en", late);
    expect((await plansIn("en")).json.freePlan.title).toBe("Renamed");
  });
});
