import { createRoute, z } from "@hono/zod-openapi";
import { setMaintenance } from "../chats/maintenance";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { adminSecurity } from "./guard";

export const adminMaintenanceRoutes = createRouter();
const Maintenance = z.strictObject({ enabled: z.boolean() }).openapi("Maintenance");

adminMaintenanceRoutes.openapi(
  createRoute({
    method: "put",
    path: "/maintenance",
    operationId: "setMaintenance",
    tags: ["Admin"],
    security: adminSecurity,
    summary: "Start or end maintenance: submissions are still accepted but wait as queued until it ends",
    request: { body: jsonBody(Maintenance) },
    responses: { 200: jsonResponse(Maintenance, "The maintenance state"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { enabled } = c.req.valid("json");
    await setMaintenance(c.env.DB, enabled);
    return c.json({ enabled }, 200);
  },
);
