import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { describeAgent } from "../agent/select";
import { config } from "../config";
import type { AppEnv } from "../env";
import { noResourceHere } from "../http/not-found";

const DEV_SERVER_PATH = "/dev/server";

/** True where /dev/server does not exist: everywhere but a wrangler dev that the project's scripts started. */
export const devServerHidden = (c: Context<AppEnv>) => c.req.path === DEV_SERVER_PATH && !config(c.env).devServerId;

/**
 * `GET /dev/server` answers the DEV_SERVER_ID this Worker was started with, asked without credentials: a
 * script that started wrangler dev with a fresh id knows from it that the port is this Worker's before it
 * sends an admin token or a password there. It also names the agent, which wrangler's table shows as hidden.
 */
export function mountDevServer(app: OpenAPIHono<AppEnv>) {
  // Before the route, for every method: without the id the path answers as if it did not exist.
  app.use(DEV_SERVER_PATH, async (c, next) => {
    if (devServerHidden(c)) throw noResourceHere();
    await next();
  });
  app.get(DEV_SERVER_PATH, (c) => {
    const settings = config(c.env);
    return c.json({ id: settings.devServerId, agent: describeAgent(settings, { ai: c.env.AI }) }, 200, { "cache-control": "no-store" });
  });
}
