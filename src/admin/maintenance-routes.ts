import { createRoute, z } from "@hono/zod-openapi";
import { MAINTENANCE_FRESH_MS, setMaintenance } from "../chats/maintenance";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";

export const adminMaintenanceRoutes = createRouter();
export const Maintenance = z.strictObject({ enabled: z.boolean() }).openapi("Maintenance");

adminMaintenanceRoutes.openapi(
  createRoute({
    method: "put",
    path: "/maintenance",
    operationId: "setMaintenance",
    tags: ["Admin"],
    security: adminSecurity,
    summary: "Start or end maintenance: submissions are still accepted but wait as queued until it ends",
    description: `Starting it answers after ${MAINTENANCE_FRESH_MS / 1000} s, once every cached copy of the flag has expired: from then on no task starts.`,
    request: { body: jsonBody(Maintenance) },
    responses: { 200: jsonResponse(Maintenance, "The maintenance state"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { enabled } = c.req.valid("json");
    await setMaintenance(c.env.DB, enabled);
    // Other isolates and chat objects reuse the flag for up to MAINTENANCE_FRESH_MS; ending maintenance may be seen late, starting it may not.
    if (enabled) await scheduler.wait(MAINTENANCE_FRESH_MS);
    return c.json({ enabled }, 200);
  },
);
