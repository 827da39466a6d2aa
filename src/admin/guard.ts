import { createMiddleware } from "hono/factory";
import { config } from "../config";
import type { AppEnv } from "../env";
import { secretsEqual } from "../crypto";
import { notFound, unauthorized } from "../http/problem";
import { bearerToken } from "../auth/secrets";

/** The OpenAPI security requirement of every operator operation. */
export const adminSecurity = [{ adminBearer: [] }];

/** /admin/* exists only when ADMIN_TOKEN is set, and then only for a bearer holding it. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const expected = config(c.env).adminToken;
  if (!expected) throw notFound("There is no resource at this path.");
  const given = bearerToken(c.req.header("authorization"));
  if (!given || !(await secretsEqual(given, expected))) throw unauthorized("admin", "A valid admin bearer token is required.");
  await next();
});
