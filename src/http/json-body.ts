import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { invalidRequest } from "./problem";

const JSON_MEDIA_TYPE = /^application\/([a-z0-9.-]+\+)?json$/i;
// One decode at a time, never streamed, so one decoder serves every request (making one costs more than the decode of a small body).
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The charset parameter of a media type's parameters (RFC 9110: `name=value` or `name="value"`), if any. */
function charsetOf(params: string[]): string | undefined {
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === "charset")
      return param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1")
        .toLowerCase();
  }
  return undefined;
}

/** True when a JSON text parses and one of its strings (or keys) is not well-formed Unicode; malformed JSON is the validator's to report. */
function hasUnpairedSurrogate(text: string): boolean {
  let found = false;
  try {
    JSON.parse(text, (key, value) => {
      if (!key.isWellFormed() || (typeof value === "string" && !value.isWellFormed())) found = true;
      return value;
    });
  } catch {
    return false;
  }
  return found;
}

/**
 * Every JSON request body, before a validator reads it. The media type is matched as RFC 9110
 * allows (parameters, whitespace around `;`), so `application/json ; charset=utf-8` is JSON; a
 * charset other than UTF-8, or bytes that are not valid UTF-8, get 400 instead of being decoded
 * with U+FFFD substitutions.
 */
export const jsonBodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("content-type");
  if (!header || !c.req.raw.body || c.req.method === "GET" || c.req.method === "HEAD") return next();
  const [type = "", ...params] = header.split(";");
  const mediaType = type.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) return next();
  const charset = charsetOf(params);
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw invalidRequest("JSON bodies must be UTF-8.", [{ path: "content-type", message: `charset ${charset} is not supported; send UTF-8` }]);
  }
  const bytes = await c.req.arrayBuffer();
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw invalidRequest("The request body is not valid UTF-8.", [{ path: "(body)", message: "not valid UTF-8" }]);
  }
  // A \uD800–\uDFFF escape without its other half is valid JSON but not text: storage would keep it as U+FFFD.
  if (text.includes("\\u") && hasUnpairedSurrogate(text)) {
    throw invalidRequest("The request body contains an unpaired surrogate escape; strings must be well-formed Unicode.", [
      { path: "(body)", message: "unpaired UTF-16 surrogate in a string" },
    ]);
  }
  // Every later read of the body (the validators' c.req.json(), a channel's c.req.text()) takes the text decoded here.
  // (Hono keeps a promise under each key, though its type names the value.)
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
  // The validators match the bare media type: a header with parameters is rebuilt without them (the bytes are read already).
  if (header !== mediaType) {
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", mediaType);
    c.req.raw = new Request(c.req.raw, { headers, body: bytes });
  }
  await next();
});

/** For an operation whose body is optional: an empty body is no body, whatever its Content-Type says (clients often send one anyway). */
export const emptyBodyIsNone = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body && (await c.req.arrayBuffer()).byteLength === 0) {
    const headers = new Headers(c.req.raw.headers);
    headers.delete("content-type");
    c.req.raw = new Request(c.req.raw, { headers, body: null });
  }
  await next();
});
