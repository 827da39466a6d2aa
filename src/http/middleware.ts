import { createMiddleware } from "hono/factory";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { ApiError } from "./problem";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Every response carries x-request-id: the caller's own when it is a sane token, else a fresh UUID. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("x-request-id", id);
});

const PUBLIC_METHODS = "GET, HEAD, OPTIONS";

/** Anonymous endpoints: any origin may read, never with credentials; preflight answers 204 with no data. */
export const publicCors = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "OPTIONS") {
    return c.body(null, 204, {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": PUBLIC_METHODS,
      "access-control-allow-headers": c.req.header("access-control-request-headers") ?? "accept-language, if-none-match",
      "access-control-max-age": "86400",
      allow: PUBLIC_METHODS,
    });
  }
  await next();
  c.res.headers.set("access-control-allow-origin", "*");
  c.res.headers.set("access-control-expose-headers", "content-language, etag, server-timing, x-request-id");
});

export const MiB = 1024 * 1024;

/** Refuses bodies over maxBytes before anything reads them. */
export const limitBody = (maxBytes: number) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, "payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
    },
  });
