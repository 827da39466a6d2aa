import { createRoute, z } from "@hono/zod-openapi";
import { setMaintenance } from "../chats/credits";
import { forgetMaintenanceFlag } from "../chats/maintenance";
import { createRouter, problems } from "../http/router";

export const adminMaintenanceRoutes = createRouter();
const Maintenance = z.strictObject({ enabled: z.boolean() }).openapi("Maintenance");

adminMaintenanceRoutes.openapi(
  createRoute({
    method: "put", path: "/admin/maintenance", tags: ["Admin"], security: [{ adminBearer: [] }],
    summary: "Start or end maintenance: submissions are still accepted but wait as queued until it ends",
    request: { body: { required: true, content: { "application/json": { schema: Maintenance } } } },
    responses: { 200: { description: "The maintenance state", content: { "application/json": { schema: Maintenance } } }, ...problems(400, 401, 404) },
  }),
  async (c) => {
    const { enabled } = c.req.valid("json");
    await setMaintenance(c.env.DB, enabled);
    forgetMaintenanceFlag();
    return c.json({ enabled }, 200);
  },
);
