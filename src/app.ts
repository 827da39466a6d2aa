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
import { MESSAGE_BODY_LIMIT_BYTES } from "./chats/schemas";
import { OPENAPI_PATH, mountDocs } from "./docs/routes";
import { jsonBodyGuard } from "./http/json-body";
import { limitBody, publicCors, requestId } from "./http/middleware";
import { describeForLog } from "./db/errors";
import { problemResponse, toApiError } from "./http/problem";
import { registerComponents } from "./http/openapi-components";
import { createRouter } from "./http/router";
import { notFoundOrMethodNotAllowed } from "./http/routing";

const MiB = 1024 * 1024;

/** Assembles the Worker: middleware order, route mounting, OpenAPI, and the two error handlers. */
export function createApp() {
  const app = createRouter();

  app.use("*", requestId);
  for (const path of [...PUBLIC_CATALOG_PATHS, OPENAPI_PATH]) app.use(path, publicCors);
  app.use("/admin/*", requireAdmin, limitBody(16 * MiB));
  // Never below the largest valid message body, however the client escapes its characters.
  app.use("/v1/*", limitBody(MESSAGE_BODY_LIMIT_BYTES));
  app.use("/agent/*", limitBody(MiB));
  app.use("/auth/*", accountCors, limitBody(MiB));
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

  registerComponents(app.openAPIRegistry);
  mountDocs(app);

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
