import { Scalar } from "@scalar/hono-api-reference";
import { adminAccountRoutes } from "./admin/accounts-routes";
import { adminCatalogRoutes } from "./admin/catalog-routes";
import { adminMaintenanceRoutes } from "./admin/maintenance-routes";
import { agentCallbackRoutes } from "./agent/callback-routes";
import { requireAdmin } from "./admin/guard";
import { tokenGate } from "./auth/gate";
import { authRoutes } from "./auth/routes";
import { accountCors } from "./auth/session";
import { PUBLIC_CATALOG_PATHS, catalogRoutes } from "./catalog/routes";
import { chatRoutes } from "./chats/routes";
import { jsonBodyGuard } from "./http/json-body";
import { limitBody, publicCors, requestId } from "./http/middleware";
import { describeForLog } from "./db/errors";
import { problemResponse, toApiError } from "./http/problem";
import { createRouter } from "./http/router";
import { notFoundOrMethodNotAllowed } from "./http/routing";

export const API_VERSION = "12.0.1";
const OPENAPI_PATH = "/v1/openapi.json";

/** Assembles the Worker: middleware order, route mounting, OpenAPI, and the two error handlers. */
export function createApp() {
  const app = createRouter();

  app.use("*", requestId);
  for (const path of [...PUBLIC_CATALOG_PATHS, OPENAPI_PATH]) app.use(path, publicCors);
  app.use("/admin/*", requireAdmin, limitBody(16 * 1024 * 1024));
  app.use("/v1/*", limitBody(1024 * 1024));
  app.use("/agent/*", limitBody(1024 * 1024));
  app.use("/auth/*", accountCors, limitBody(1024 * 1024));
  app.use("/v1/projects/*", tokenGate);
  // After the size limits and the guards: only an admitted request's body is read.
  app.use("*", jsonBodyGuard);

  app.route("/", catalogRoutes);
  app.route("/", authRoutes);
  app.route("/", chatRoutes);
  app.route("/", agentCallbackRoutes);
  app.route("/", adminCatalogRoutes);
  app.route("/", adminAccountRoutes);
  app.route("/", adminMaintenanceRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "userApiTokenBearer", {
    type: "http", scheme: "bearer", description: "A personal API token (pct_…) from POST /auth/api-tokens, with the chat:read and/or chat:write scope",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "accountSessionBearer", { type: "http", scheme: "bearer", description: "An account session token (pcs_…) from POST /auth/token" });
  app.openAPIRegistry.registerComponent("securitySchemes", "adminBearer", { type: "http", scheme: "bearer", description: "ADMIN_TOKEN (operators only)" });
  app.doc31(OPENAPI_PATH, {
    openapi: "3.1.0",
    info: {
      title: "Project Chat API v1",
      version: API_VERSION,
      description: "Project chats, personal API tokens and the anonymous public catalog. Errors are RFC 9457 problem+json.",
    },
  });
  app.get("/v1/docs", Scalar({ url: OPENAPI_PATH, pageTitle: "Project Chat API v1" }));

  app.notFound(notFoundOrMethodNotAllowed(app));
  app.onError((error, c) => {
    const problem = toApiError(error);
    const id = c.get("requestId");
    // Path only: query strings and headers may carry secrets and are never logged.
    if (problem.status >= 500) {
      const unexpected = problem.code === "internal_error";
      const entry = { level: unexpected ? "error" : "warn", requestId: id, method: c.req.method, path: c.req.path, status: problem.status, error: unexpected ? describeForLog(error) : problem.message };
      (unexpected ? console.error : console.warn)(JSON.stringify(entry));
    }
    return problemResponse(problem, id);
  });
  return app;
}
