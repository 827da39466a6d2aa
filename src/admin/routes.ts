import { jsonBodyGuard } from "../http/json-body";
import { MiB, limitBody } from "../http/middleware";
import { createRouter } from "../http/router";
import { adminAccountRoutes } from "./accounts-routes";
import { adminCatalogRoutes } from "./catalog-routes";
import { requireAdmin } from "./guard";
import { adminProjectRoutes } from "./projects-routes";
import { adminMaintenanceRoutes } from "./maintenance-routes";
import { adminMoveRoutes } from "./move-routes";

/** The operator API, mounted at /admin: nothing here answers without ADMIN_TOKEN (and nothing at all while it is unset). */
export const adminRoutes = createRouter();
// A whole catalog document with every translation is the largest body.
adminRoutes.use("*", requireAdmin, limitBody(16 * MiB), jsonBodyGuard);
adminRoutes.route("/", adminCatalogRoutes);
adminRoutes.route("/", adminAccountRoutes);
adminRoutes.route("/", adminProjectRoutes);
adminRoutes.route("/", adminMaintenanceRoutes);
adminRoutes.route("/", adminMoveRoutes);
