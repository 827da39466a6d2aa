import { createRoute, z } from "@hono/zod-openapi";
import { MAINTENANCE_FRESH_MS, MAINTENANCE_LEASE_MS, setMaintenance } from "../chats/maintenance";
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
    description:
      `Once it answers, no task starts until maintenance ends (a dispatch reads the switch, or its word that maintenance is off, ` +
      `good for ${MAINTENANCE_LEASE_MS / 1000} s, which turning it on waits out: it may take that long to answer). A send answered by another ` +
      `instance within ${MAINTENANCE_FRESH_MS / 1000} s may still be told \`started\`; it waits as queued all the same.`,
    request: { body: jsonBody(Maintenance) },
    responses: { 200: jsonResponse(Maintenance, "The maintenance state"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { enabled } = c.req.valid("json");
    // The state as it stands: a call that turned it off while this one waited to turn it on wins.
    return c.json({ enabled: await setMaintenance(c.env, enabled) }, 200);
  },
);
