import { LANGUAGES, type Language } from "./schema";

/**
 * Picks the supported language an Accept-Language header prefers (RFC 9110): highest q wins,
 * ties keep header order, regions count as their language, and anything else falls back to en.
 */
export function resolveLanguage(header: string | null | undefined): Language {
  if (!header) return "en";
  let best: { language: Language; q: number } | undefined;
  for (const part of header.slice(0, 1024).split(",")) {
    const [tag = "", ...params] = part.trim().split(";");
    const primary = tag.trim().toLowerCase().split("-")[0] as Language;
    if (!LANGUAGES.includes(primary)) continue;
    const qParam = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0 || q > 1) continue;
    if (!best || q > best.q) best = { language: primary, q };
  }
  return best?.language ?? "en";
}
