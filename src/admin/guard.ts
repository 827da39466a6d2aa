import { createMiddleware } from "hono/factory";
import { config } from "../config";
import type { AppEnv } from "../env";
import { secretsEqual } from "../auth/crypto";
import { ApiError } from "../http/problem";

/** /admin/* exists only when ADMIN_TOKEN is set, and then only for a bearer holding it. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const expected = config(c.env).adminToken;
  if (!expected) throw new ApiError(404, "not_found", "There is no resource at this path.");
  const header = c.req.header("authorization") ?? "";
  const given = header.match(/^Bearer ([^\s]+)$/i)?.[1] ?? "";
  if (!given || !(await secretsEqual(given, expected))) {
    throw new ApiError(401, "unauthorized", "A valid admin bearer token is required.", {
      headers: { "www-authenticate": 'Bearer realm="admin", error="invalid_token"' },
    });
  }
  await next();
});
