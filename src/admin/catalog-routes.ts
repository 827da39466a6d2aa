import { createRoute } from "@hono/zod-openapi";
import { invalidateCatalogCache } from "../catalog/cache";
import { CatalogDocument } from "../catalog/schema";
import { readCatalog, replaceCatalog } from "../catalog/store";
import { notFound } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";

export const adminCatalogRoutes = createRouter();

adminCatalogRoutes.openapi(
  createRoute({
    method: "put",
    path: "/catalog",
    operationId: "replaceCatalog",
    tags: ["Admin"],
    summary: "Replace the whole catalog atomically",
    security: adminSecurity,
    request: { body: jsonBody(CatalogDocument) },
    responses: { 204: { description: "Replaced; the instance that took it serves it at once" }, ...problems(400, 401, 404) },
  }),
  async (c) => {
    await replaceCatalog(c.env.DB, c.req.valid("json"));
    await invalidateCatalogCache();
    return c.body(null, 204);
  },
);

adminCatalogRoutes.openapi(
  createRoute({
    method: "get",
    path: "/catalog",
    operationId: "getCatalog",
    tags: ["Admin"],
    summary: "The stored catalog document, including what the public endpoints hide",
    security: adminSecurity,
    responses: { 200: jsonResponse(CatalogDocument, "The catalog document"), ...problems(401, 404) },
  }),
  async (c) => {
    const doc = await readCatalog(c.env.DB);
    if (!doc) throw notFound("No catalog has been loaded yet.");
    return c.json(doc, 200);
  },
);
