import { registrationThrottleFor } from "../auth/sign-in-throttle";
import type { Env } from "../env";
import { publicNameProblem } from "../http/public-hosts";
import { log } from "../log";

/**
 * Client ID Metadata Documents: a client_id that is an https URL names a document the service
 * fetches. Fetching is what an unauthenticated visitor can make the service do, so it is bounded
 * here: only a public name on the default port, no redirect, 3 s, 5 KB, one lookup per address
 * counted with registrations, results cached, and a failure logged by host only.
 */

const LOOKUP_TIMEOUT_MS = 3_000;
const DOCUMENT_MAX_BYTES = 5 * 1024;
const SUCCESS_TTL_MS = 3_600_000;
const FAILURE_TTL_MS = 5 * 60_000;
// A document that may not be cached is still kept for the library's own read within the same authorization step.
const UNCACHEABLE_TTL_MS = 10_000;
const CACHE_ENTRIES = 512;
const LOG_EVERY_MS = 60_000;
// Lookups one address may cause in 15 minutes: the same counter as client registrations.
export const LOOKUPS_PER_ADDRESS = 20;
// What the library sends with each of its own outbound requests (package version after the slash).
const LIBRARY_AGENT = "workers-oauth-provider/";
const OWN_AGENT = "project-chat (client metadata lookup)";

type Lookup = { kind: "document"; bytes: Uint8Array; contentType: string } | { kind: "failed"; why: string };
type LookupOutcome = Lookup | { kind: "refused"; why: string } | { kind: "limited"; retryAfterSeconds: number };

// Per isolate: a client id looked up again within its time costs no fetch.
const cache = new Map<string, { until: number; lookup: Lookup }>();
// When a failed lookup was last logged, per client address.
const lastLogged = new Map<string, number>();

/** Why a client-id URL is never fetched, or null when it may be: https on the default port, to a public name (the rule every outbound URL follows). */
function clientIdUrlProblem(clientId: string): string | null {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "https:") return "not https";
  if (url.port !== "") return "not on the default port";
  return publicNameProblem(url.hostname);
}

/** Whether a client_id is a metadata-document URL rather than a registered client's id. */
export const isClientIdUrl = (clientId: string) => /^https?:\/\//i.test(clientId);

/**
 * The document a client-id URL names, as this deployment may see it: refused (never fetched), limited
 * (the address has looked up too much), failed (cached 5 minutes), or the document (cached an hour, or
 * as long as its Cache-Control allows).
 */
export async function lookUpClientDocument(env: Env, clientId: string, clientAddress: string | undefined): Promise<LookupOutcome> {
  const problem = clientIdUrlProblem(clientId);
  if (problem) return { kind: "refused", why: problem };
  const now = Date.now();
  const cached = cache.get(clientId);
  if (cached && cached.until > now) return cached.lookup;
  const reservation = await (await registrationThrottleFor(env, clientAddress)).reserve(LOOKUPS_PER_ADDRESS);
  if (reservation.kind === "limited") return reservation;
  const { lookup, ttlMs } = await fetchDocument(clientId);
  remember(clientId, lookup, ttlMs);
  if (lookup.kind === "failed") logFailure(clientId, clientAddress ?? "unknown", lookup.why);
  return lookup;
}

function remember(clientId: string, lookup: Lookup, ttlMs: number): void {
  cache.delete(clientId);
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(clientId, { until: Date.now() + ttlMs, lookup });
}

/** The host only (a visitor chose the rest of the URL), at most once a minute per client address. */
function logFailure(clientId: string, clientAddress: string, why: string): void {
  const now = Date.now();
  if ((lastLogged.get(clientAddress) ?? 0) > now - LOG_EVERY_MS) return;
  lastLogged.set(clientAddress, now);
  if (lastLogged.size > CACHE_ENTRIES) lastLogged.delete(lastLogged.keys().next().value!);
  log.warn("client_metadata_lookup_failed", { host: new URL(clientId).host, why });
}

/** One fetch: no redirect followed (a 3xx fails), 3 s in all, at most 5 KB read. */
async function fetchDocument(clientId: string): Promise<{ lookup: Lookup; ttlMs: number }> {
  const failed = (why: string) => ({ lookup: { kind: "failed" as const, why }, ttlMs: FAILURE_TTL_MS });
  const signal = AbortSignal.timeout(LOOKUP_TIMEOUT_MS);
  try {
    const response = await fetch(clientId, { redirect: "manual", signal, headers: { accept: "application/json", "user-agent": OWN_AGENT } });
    if (response.status !== 200) {
      await response.body?.cancel();
      return failed(response.status >= 300 && response.status < 400 ? "redirected" : `HTTP ${response.status}`);
    }
    const bytes = await readAtMost(response, DOCUMENT_MAX_BYTES, signal);
    if (!bytes) return failed(`larger than ${DOCUMENT_MAX_BYTES} bytes`);
    return {
      lookup: { kind: "document", bytes, contentType: response.headers.get("content-type") ?? "application/json" },
      ttlMs: documentTtl(response.headers.get("cache-control")),
    };
  } catch (error) {
    return failed(signal.aborted ? `no answer within ${LOOKUP_TIMEOUT_MS} ms` : error instanceof Error ? error.name : "fetch failed");
  }
}

/** An hour, or less as the document's Cache-Control says (a document that may not be stored: only for this authorization step). */
function documentTtl(cacheControl: string | null): number {
  if (cacheControl && /(?:^|,)\s*(?:no-store|no-cache|private)\b/i.test(cacheControl)) return UNCACHEABLE_TTL_MS;
  const maxAge = cacheControl && /(?:^|,)\s*(?:s-)?max-age\s*=\s*"?(\d+)/i.exec(cacheControl);
  return maxAge ? Math.max(UNCACHEABLE_TTL_MS, Math.min(SUCCESS_TTL_MS, Number(maxAge[1]) * 1000)) : SUCCESS_TTL_MS;
}

/** The body, or undefined once it passes `max` bytes (the rest is never read). */
async function readAtMost(response: Response, max: number, signal: AbortSignal): Promise<Uint8Array | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return bytes;
}

/**
 * What the OAuth library's metadata-document requests get (it would fetch following redirects for
 * 10 s): what `lookUpClientDocument` found (the routes look a client id up before the library sees it).
 */
async function answerLibrary(input: RequestInfo | URL, env: Env | undefined): Promise<Response> {
  const url = input instanceof Request ? input.url : String(input);
  const cached = cache.get(url);
  const lookup = cached && cached.until > Date.now() ? cached.lookup : env && isClientIdUrl(url) ? await lookUpClientDocument(env, url, undefined) : undefined;
  if (lookup?.kind !== "document") return new Response(null, { status: 502 });
  // The library caches what it is handed as long as its Cache-Control allows: no longer than this lookup is kept.
  const seconds = Math.max(0, Math.floor(((cached?.until ?? Date.now() + UNCACHEABLE_TTL_MS) - Date.now()) / 1000));
  return new Response(lookup.bytes, { status: 200, headers: { "content-type": lookup.contentType, "cache-control": `public, max-age=${seconds}` } });
}

/** What the library asks for: a metadata document (it sends Cache-Control: no-store), something else (a jwks_uri), or nothing of its own. */
function libraryRequest(input: RequestInfo | URL, init?: RequestInit): "document" | "other" | undefined {
  const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
  if (!headers.get("user-agent")?.startsWith(LIBRARY_AGENT)) return undefined;
  return headers.get("cache-control") === "no-store" ? "document" : "other";
}

let governed: typeof fetch | undefined;
let lookupEnv: Env | undefined;

/**
 * Puts the global fetch, which the library calls, behind the outbound rules: its metadata-document
 * requests are answered by `answerLibrary`, anything else it asks for (a client's jwks_uri) is never
 * fetched; every other request goes through as before. Once per isolate; the env is the one lookups are counted with.
 */
export function governLibraryFetch(env: Env): void {
  lookupEnv = env;
  if (governed && globalThis.fetch === governed) return;
  const platform = globalThis.fetch;
  governed = (input, init) => {
    const asked = libraryRequest(input, init);
    if (asked === undefined) return platform(input, init);
    return asked === "document" ? answerLibrary(input, lookupEnv) : Promise.resolve(new Response(null, { status: 502 }));
  };
  globalThis.fetch = governed;
}
