import type { Env } from "../env";
import { config } from "../config";
import { strongEtag } from "../http/etag";
import { LANGUAGES, type CatalogDocument, type Language } from "./schema";
import { readCatalog } from "./store";

/** readAt: when the catalog it was rendered from was read from D1, so a late rendering of an old read is not taken for new. */
export type RenderedBody = { body: string; etag: string; readAt: number };
/** Where a rendering came from, for Server-Timing: memory, the colo cache, a fresh D1 read, or a render of the document already loaded. */
export type CacheSource = "memory" | "colo" | "d1" | "render";
export type CatalogEndpoint = "plans" | "privacy-policy" | "terms-of-use" | "chat-banners" | "page-top-banners" | "poll";
const CATALOG_ENDPOINTS: CatalogEndpoint[] = ["plans", "privacy-policy", "terms-of-use", "chat-banners", "page-top-banners", "poll"];

// Isolate memory: a hot request is a Map lookup, no D1 and no Cache API round trip.
const rendered = new Map<string, RenderedBody>();
let loadedDocument: { document: CatalogDocument | null; loadedAt: number } | undefined;
// Bumped by every invalidation so a read that started before a PUT cannot store what it read.
let generation = 0;
// When this isolate last took a catalog change: colo copies read before it are another isolate's late store of the old catalog.
let invalidatedAt = 0;

const cacheSeconds = (env: Env) => config(env).catalogCacheSeconds;
const cacheKey = (endpoint: CatalogEndpoint, language: Language) => new Request(`https://catalog.cache.internal/${endpoint}/${language}`);

/**
 * The catalog as last read, while younger than maxAgeMs; else read from D1 by this request. A read
 * in progress is not shared with other requests: what they did after awaiting it would run on
 * behalf of the request that started it (see ReadMostly).
 */
async function loadDocument(env: Env, now: number, maxAgeMs: number): Promise<{ document: CatalogDocument | null; loadedAt: number; fresh: boolean }> {
  const held = loadedDocument;
  if (held && now - held.loadedAt < maxAgeMs) return { ...held, fresh: false };
  const startedAt = generation;
  const document = await readCatalog(env.DB);
  if (startedAt === generation && (!loadedDocument || loadedDocument.loadedAt <= now)) loadedDocument = { document, loadedAt: now };
  return { document, loadedAt: now, fresh: true };
}

/**
 * The rendered body of one catalog endpoint in one language: from isolate memory, else the
 * colo's Cache API, else D1. Nothing is served more than CATALOG_CACHE_SECONDS after the catalog it
 * shows was read from D1.
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
  if (hot && now - hot.readAt < maxAgeMs) return { ...hot, source: "memory" };

  const startedAt = generation;
  const cache = await caches.open("catalog");
  const shared = maxAgeMs > 0 ? await cache.match(cacheKey(endpoint, language)) : undefined;
  if (shared) {
    const readAt = Number(shared.headers.get("x-read-at"));
    const entry = { body: await shared.text(), etag: shared.headers.get("etag") ?? "", readAt };
    if (now - readAt < maxAgeMs && readAt > invalidatedAt && entry.etag) {
      if (startedAt === generation) rendered.set(key, entry);
      return { ...entry, source: "colo" };
    }
  }

  const document = await loadDocument(env, now, maxAgeMs);
  const body = JSON.stringify(render(document.document));
  // Aged from the read, not the render: a rendering of a document held for 29 s has 1 s left.
  const entry = { body, etag: await strongEtag(body), readAt: document.loadedAt };
  const secondsLeft = Math.ceil((document.loadedAt + maxAgeMs - now) / 1000);
  if (startedAt === generation && maxAgeMs > 0) {
    rendered.set(key, entry);
    const stored = new Response(body, {
      headers: { "cache-control": `max-age=${secondsLeft}`, etag: entry.etag, "x-read-at": String(entry.readAt) },
    });
    ctx.waitUntil(cache.put(cacheKey(endpoint, language), stored));
  }
  return { ...entry, source: document.fresh ? "d1" : "render" };
}

/** Drops every cached rendering, in memory and in this colo's Cache API, after the catalog changed. */
export async function invalidateCatalogCache(): Promise<void> {
  generation++;
  invalidatedAt = Date.now();
  rendered.clear();
  loadedDocument = undefined;
  const cache = await caches.open("catalog");
  await Promise.all(CATALOG_ENDPOINTS.flatMap((e) => LANGUAGES.map((l) => cache.delete(cacheKey(e, l)))));
}
