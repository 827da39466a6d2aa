import { OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { ref, headers } from "../http/openapi-components";

export type Audience = "public" | "operator";
type Info = { title: string; version: string; description: string };
type Response = { $ref?: string; headers?: Record<string, unknown>; [key: string]: unknown };
type Operation = { requestBody?: unknown; security?: Record<string, string[]>[]; responses: Record<string, Response> };
type Document = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

const METHODS = ["get", "put", "post", "patch", "delete"] as const;
const isOperatorPath = (path: string) => path === "/admin" || path.startsWith("/admin/");

/**
 * The OpenAPI 3.1 document of one audience, from the same route definitions that validate
 * requests: public clients never see operator operations, operators get only theirs.
 */
export function describeApi(app: OpenAPIHono<AppEnv>, audience: Audience, info: Info, publicOrigin: string | undefined): Document {
  // Operators get only their operations; the webhooks a project's owner receives are the public API's.
  const definitions = app.openAPIRegistry.definitions.filter((d) =>
    d.type === "route" ? isOperatorPath(d.route.path) === (audience === "operator") : d.type !== "webhook" || audience === "public",
  );
  // Without PUBLIC_URL the paths are relative to wherever the document was read from.
  const server = publicOrigin
    ? { url: publicOrigin, description: "This deployment (PUBLIC_URL)" }
    : { url: "/", description: "The deployment that served this document (relative to its address)" };
  const doc = new OpenApiGeneratorV31(definitions).generateDocument({
    openapi: "3.1.0",
    info: { ...info, license: { name: "Proprietary", url: `${publicOrigin ?? ""}/v1/terms-of-use` } },
    servers: [server],
  });
  for (const operation of operations(doc)) addCrossCuttingResponses(doc, operation);
  pruneUnusedComponents(doc);
  return doc;
}

function* operations(doc: Document): Generator<Operation> {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) yield item[method] as Operation;
  }
}

/**
 * What every route shares is added here rather than on each route: the middleware answers 405,
 * 413 and 500 for any operation, any of them answers 503 while D1 cannot be reached and no recent
 * copy of what it needs is held, x-request-id is on every response, and the token gate puts the
 * rate-limit headers on every answer to an admitted API-token request.
 */
function addCrossCuttingResponses(doc: Document, operation: Operation) {
  const responses = operation.responses;
  responses[405] ??= ref("responses", "MethodNotAllowed");
  if (operation.requestBody) responses[413] ??= ref("responses", "ContentTooLarge");
  responses[500] ??= ref("responses", "InternalError");
  responses[503] ??= ref("responses", "ServiceUnavailable");
  const rateLimited = operation.security?.some((s) => "userApiTokenBearer" in s) ?? false;
  for (const [status, response] of Object.entries(responses)) {
    // 401 comes from the gate before a token is admitted, so it carries no rate-limit headers.
    if (rateLimited && status !== "401") responses[status] = withHeaders(resolve(doc, response), "RateLimit", "RateLimit-Policy");
    else if (!response.$ref) responses[status] = withHeaders(response);
  }
}

const resolve = (doc: Document, response: Response): Response =>
  response.$ref ? structuredClone(((doc.components?.responses ?? {}) as Record<string, Response>)[response.$ref.split("/").pop()!]!) : response;

const withHeaders = (response: Response, ...names: ("RateLimit" | "RateLimit-Policy")[]): Response => ({
  ...response,
  headers: { ...headers("x-request-id", ...names), ...response.headers },
});

/** Drops shared components this document never refers to (each document registers all of them). */
function pruneUnusedComponents(doc: Document) {
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>;
  const used = new Set<string>();
  let reachable: unknown = [doc.paths, (doc as { webhooks?: unknown }).webhooks];
  for (;;) {
    const found = [...JSON.stringify(reachable).matchAll(/"#\/components\/([A-Za-z]+)\/([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}`).filter((r) => !used.has(r));
    if (found.length === 0) break;
    for (const r of found) used.add(r);
    reachable = found.map((r) => components[r.split("/")[0]!]?.[r.split("/")[1]!]);
  }
  const schemes = new Set([...operations(doc)].flatMap((o) => (o.security ?? []).flatMap((s) => Object.keys(s))));
  for (const [kind, entries] of Object.entries(components)) {
    for (const name of Object.keys(entries)) {
      const keep = kind === "securitySchemes" ? schemes.has(name) : used.has(`${kind}/${name}`);
      if (!keep) delete entries[name];
    }
    if (Object.keys(entries).length === 0) delete components[kind];
  }
}
