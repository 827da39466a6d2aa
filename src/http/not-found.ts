import type { Context, MiddlewareHandler } from "hono";
import { ApiError, invalidRequest, problemResponse } from "./problem";

/** The known paths' patterns by their number of segments (a pattern's parameter is one segment), so a path is tested only against its peers. */
type RouteTable = Map<number, { pattern: RegExp; methods: Set<string> }[]>;

type Routed = { routes: { path: string; method: string }[] };

const segmentsOf = (path: string) => path.split("/").length;

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
  const table: RouteTable = new Map();
  for (const [path, methods] of byPath) {
    const pattern = new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}$`);
    const segments = segmentsOf(path);
    const peers = table.get(segments) ?? [];
    peers.push({ pattern, methods });
    table.set(segments, peers);
  }
  return table;
}

/**
 * The methods each known path takes, as the router matches paths (exactly: `/v1/plans/` is another,
 * unknown path); an empty set for an unknown path. The table is built on first use, after all routes exist.
 */
function methodsOf(app: Routed): (path: string) => Set<string> {
  let table: RouteTable | undefined;
  return (path) => {
    table ??= routeTable(app);
    const allowed = new Set<string>();
    for (const { pattern, methods } of table.get(segmentsOf(path)) ?? []) if (pattern.test(path)) for (const method of methods) allowed.add(method);
    return allowed;
  };
}

/** The 404 of a path that does not exist here. */
export const noResourceHere = () => new ApiError(404, "not_found", "There is no resource at this path.");

const methodNotAllowed = (c: Context, allowed: Set<string>) => {
  const allow = [...allowed].join(", ");
  return problemResponse(new ApiError(405, "method_not_allowed", `${c.req.method} is not allowed here. Use ${allow}.`, { headers: { allow } }), c.get("requestId"));
};

/** The app's not-found handler: a known path with another method is 405 with Allow (OPTIONS gets 204 with Allow), anything else a problem 404. */
export function notFoundOrMethodNotAllowed(app: Routed) {
  const methods = methodsOf(app);
  return (c: Context) => {
    const allowed = methods(c.req.path);
    if (allowed.size === 0) {
      return problemResponse(noResourceHere(), c.get("requestId"));
    }
    if (c.req.method === "OPTIONS") return c.body(null, 204, { allow: [...allowed].join(", ") });
    return methodNotAllowed(c, allowed);
  };
}

/** True when a request body has at least one byte; reads no further than its first non-empty chunk. */
async function carriesBytes(body: ReadableStream<Uint8Array>): Promise<boolean> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Before every router's own guards (credentials, CORS, body limits): a wrong method on a known path
 * is 405 whoever asks, since no credential makes it right; and a GET or HEAD that carries a body is
 * 400, since no operation here reads one (a body-less GET with a Content-Type still passes).
 * A hidden path (one that answers 404 in this deployment) is left to its router.
 */
export function methodAndBodyFirst(app: Routed, hidden: (c: Context) => boolean): MiddlewareHandler {
  const methods = methodsOf(app);
  return async (c, next) => {
    const method = c.req.method;
    if (method !== "OPTIONS" && !hidden(c)) {
      const allowed = methods(c.req.path);
      if (allowed.size > 0 && !allowed.has(method)) return methodNotAllowed(c, allowed);
    }
    if ((method === "GET" || method === "HEAD") && c.req.raw.body) {
      if (await carriesBytes(c.req.raw.body)) {
        throw invalidRequest("A GET or HEAD request cannot carry a body here. Send its parameters in the path and query.", [
          { path: "(body)", message: "not allowed on GET or HEAD" },
        ]);
      }
      // The empty stream is read now: the request goes on without one.
      c.req.raw = new Request(c.req.raw.url, { method, headers: c.req.raw.headers, signal: c.req.raw.signal });
    }
    await next();
  };
}
