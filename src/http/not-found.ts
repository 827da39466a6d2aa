import type { Context } from "hono";
import { ApiError, problemResponse } from "./problem";

type RouteTable = { pattern: RegExp; methods: Set<string> }[];

type Routed = { routes: { path: string; method: string }[] };

function routeTable(app: Routed): RouteTable {
  const byPath = new Map<string, Set<string>>();
  for (const { path, method } of app.routes) {
    if (method === "ALL" || path.includes("*")) continue;
    const methods = byPath.get(path) ?? new Set<string>();
    methods.add(method);
    if (method === "GET") methods.add("HEAD");
    methods.add("OPTIONS");
    byPath.set(path, methods);
  }
  return [...byPath].map(([path, methods]) => ({
    pattern: new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}$`),
    methods,
  }));
}

/**
 * Paths match exactly, as the router does: `/v1/plans/` is another, unknown path (404, not 405).
 * The app's not-found handler: a known path with another method is 405 with Allow (OPTIONS gets
 * 204 with Allow), anything else a problem 404. The table is built once, after all routes exist.
 */
export function notFoundOrMethodNotAllowed(app: Routed) {
  let table: RouteTable | undefined;
  return (c: Context) => {
    table ??= routeTable(app);
    const path = c.req.path;
    const allowed = new Set(table.filter((r) => r.pattern.test(path)).flatMap((r) => [...r.methods]));
    if (allowed.size === 0) {
      return problemResponse(new ApiError(404, "not_found", "There is no resource at this path."), c.get("requestId"));
    }
    const allow = [...allowed].join(", ");
    if (c.req.method === "OPTIONS") return c.body(null, 204, { allow });
    return problemResponse(new ApiError(405, "method_not_allowed", `${c.req.method} is not allowed here; use ${allow}.`, { headers: { allow } }), c.get("requestId"));
  };
}
