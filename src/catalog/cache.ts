import type { Env } from "../env";
import { config } from "../config";
import { sha256, toHex } from "../crypto";
import { LANGUAGES, type CatalogDocument, type Language } from "./schema";
import { readCatalog } from "./store";

export type RenderedBody = { body: string; etag: string; renderedAt: number };
/** Where a rendering came from, for Server-Timing: memory, the colo cache, a fresh D1 read, or a render of the document already loaded. */
export type CacheSource = "memory" | "colo" | "d1" | "render";
export type CatalogEndpoint = "plans" | "privacy-policy" | "terms-of-use" | "chat-banners" | "page-top-banners" | "poll";
const CATALOG_ENDPOINTS: CatalogEndpoint[] = ["plans", "privacy-policy", "terms-of-use", "chat-banners", "page-top-banners", "poll"];

// Isolate memory: a hot request is a Map lookup, no D1 and no Cache API round trip.
const rendered = new Map<string, RenderedBody>();
let loadedDocument: { document: CatalogDocument | null; loadedAt: number } | undefined;
// Bumped by every invalidation so a read that started before a PUT cannot store what it read.
let generation = 0;

const cacheSeconds = (env: Env) => config(env).catalogCacheSeconds;
const cacheKey = (endpoint: CatalogEndpoint, language: Language) => new Request(`https://catalog.cache.internal/${endpoint}/${language}`);

async function strongEtag(body: string): Promise<string> {
  return `"${toHex((await sha256(body)).subarray(0, 16))}"`;
}

/**
 * The catalog as last read, while younger than maxAgeMs; else read from D1 by this request. A read
 * in progress is not shared with other requests: what they did after awaiting it would run on
 * behalf of the request that started it (see ReadMostly).
 */
async function loadDocument(env: Env, now: number, maxAgeMs: number): Promise<{ document: CatalogDocument | null; fresh: boolean }> {
  const held = loadedDocument;
  if (held && now - held.loadedAt < maxAgeMs) return { document: held.document, fresh: false };
  const startedAt = generation;
  const document = await readCatalog(env.DB);
  if (startedAt === generation && (!loadedDocument || loadedDocument.loadedAt <= now)) loadedDocument = { document, loadedAt: now };
  return { document, fresh: true };
}

/**
 * The rendered body of one catalog endpoint in one language: from isolate memory, else the
 * colo's Cache API, else D1. Nothing is served older than CATALOG_CACHE_SECONDS after it was rendered.
 */
export async function renderCached(
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  endpoint: CatalogEndpoint,
  language: Language,
  render: (doc: CatalogDocument | null) => unknown,
): Promise<RenderedBody & { source: CacheSource }> {
  const key = `${endpoint}/${language}`;
  const maxAgeMs = cacheSeconds(env) * 1000;
  const now = Date.now();
  const hot = rendered.get(key);
  if (hot && now - hot.renderedAt < maxAgeMs) return { ...hot, source: "memory" };

  const startedAt = generation;
  const cache = await caches.open("catalog");
  const shared = maxAgeMs > 0 ? await cache.match(cacheKey(endpoint, language)) : undefined;
  if (shared) {
    const renderedAt = Number(shared.headers.get("x-rendered-at"));
    const entry = { body: await shared.text(), etag: shared.headers.get("etag") ?? "", renderedAt };
    if (now - renderedAt < maxAgeMs && entry.etag) {
      if (startedAt === generation) rendered.set(key, entry);
      return { ...entry, source: "colo" };
    }
  }

  const document = await loadDocument(env, now, maxAgeMs);
  const body = JSON.stringify(render(document.document));
  const entry = { body, etag: await strongEtag(body), renderedAt: now };
  if (startedAt === generation && maxAgeMs > 0) {
    rendered.set(key, entry);
    const stored = new Response(body, {
      headers: { "cache-control": `max-age=${cacheSeconds(env)}`, etag: entry.etag, "x-rendered-at": String(now) },
    });
    ctx.waitUntil(cache.put(cacheKey(endpoint, language), stored));
  }
  return { ...entry, source: document.fresh ? "d1" : "render" };
}

/** Drops every cached rendering, in memory and in this colo's Cache API, after the catalog changed. */
export async function invalidateCatalogCache(): Promise<void> {
  generation++;
  rendered.clear();
  loadedDocument = undefined;
  const cache = await caches.open("catalog");
  await Promise.all(CATALOG_ENDPOINTS.flatMap((e) => LANGUAGES.map((l) => cache.delete(cacheKey(e, l)))));
}
