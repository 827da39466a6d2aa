import { createMiddleware } from "hono/factory";
import { accountRoutes } from "./account/routes";
import { adminRoutes } from "./admin/routes";
import { agentCallbackRoutes } from "./agent/callback-routes";
import { requirePersonalToken } from "./auth/gate";
import { authRoutes } from "./auth/routes";
import { accountCors } from "./auth/session";
import { catalogRoutes } from "./catalog/routes";
import { chatRoutes } from "./chats/api/routes";
import { MESSAGE_BODY_LIMIT_BYTES } from "./chats/schemas";
import { accountCreditRoutes } from "./credits/account-routes";
import { projectCreditRoutes } from "./credits/routes";
import { config } from "./config";
import { mountFrontPage } from "./docs/front-page";
import { mountDocs } from "./docs/routes";
import { devServerHidden, mountDevServer } from "./docs/dev-server";
import { jsonBodyGuard } from "./http/json-body";
import { serverTiming } from "./http/server-timing";
import { limitBody, MiB, requestId } from "./http/middleware";
import { methodAndBodyFirst, notFoundOrMethodNotAllowed } from "./http/not-found";
import { registerComponents } from "./http/openapi-components";
import { ApiError, problemResponse, toApiError } from "./http/problem";
import { createMcpRoutes } from "./mcp/routes";
import { createA2aRoutes } from "./a2a/routes";
import { registerA2aPaths } from "./a2a/openapi";
import { createRouter } from "./http/router";
import { AUTHORIZE_PATH, isOAuthPath, oauthRoles } from "./oauth/authorization-server";
import { authorizeRoutes } from "./oauth/authorize-routes";
import { oauthEndpointRoutes } from "./oauth/endpoint-routes";
import { oauthGrantRoutes } from "./oauth/grant-routes";
import { projectRoutes } from "./projects/routes";
import { registerWebhookEvents } from "./webhooks/openapi-webhooks";
import { webhookRoutes } from "./webhooks/routes";
import { log } from "./log";

// Under /v1/projects only a chat's messages, steering texts and answers may be large (about 1.2 MB once escaped).
const CHAT_PATH = /^\/v1\/projects\/[^/]+\/chats(\/|$)/;
const chatBodyLimit = limitBody(MESSAGE_BODY_LIMIT_BYTES);
const projectBodyLimit = limitBody(MiB);
const bodyLimitPerRouter = createMiddleware((c, next) => (CHAT_PATH.test(c.req.path) ? chatBodyLimit : projectBodyLimit)(c, next));

/**
 * Assembles the Worker, the one place routers are composed: each prefix with the middleware all of
 * it shares (body limits before anything reads a body, then credentials), then the routers of the
 * domains under it. No domain mounts another's router.
 */
export function createApp() {
  const app = createRouter();
  app.use("*", requestId);
  // /admin/* is 404 while ADMIN_TOKEN is unset, /dev/server outside local development, and OAuth's endpoints while
  // PUBLIC_URL is unset: a 405 there would tell that they exist.
  app.use(
    "*",
    methodAndBodyFirst(
      app,
      (c) =>
        (c.req.path.startsWith("/admin") && !config(c.env).adminToken) ||
        devServerHidden(c) ||
        (isOAuthPath(c.req.path) && !oauthRoles(c.env)) ||
        (c.req.path.startsWith("/a2a/") && !config(c.env).publicOrigin),
    ),
  );

  app.route("/v1", catalogRoutes);
  // The project API: personal API tokens only, counted per token.
  app.use("/v1/projects/*", serverTiming, bodyLimitPerRouter, requirePersonalToken, jsonBodyGuard);
  for (const router of [projectRoutes, chatRoutes, webhookRoutes, projectCreditRoutes]) app.route("/v1/projects", router);
  // The account's own calls: an account session, credentialed CORS for APP_ORIGINS only.
  app.use("/auth/*", accountCors, limitBody(MiB), jsonBodyGuard);
  for (const router of [authRoutes, accountCreditRoutes, oauthGrantRoutes]) app.route("/auth", router);
  app.route("/", oauthEndpointRoutes);
  app.route(AUTHORIZE_PATH, authorizeRoutes);
  app.route("/account", accountRoutes);
  app.route("/agent", agentCallbackRoutes);
  app.route("/admin", adminRoutes);
  // MCP tools and every project's agent over A2A call the chat service, as the /v1 routes do.
  app.route("/mcp", createMcpRoutes());
  app.route("/a2a/projects", createA2aRoutes());
  registerComponents(app.openAPIRegistry);
  registerWebhookEvents(app);
  registerA2aPaths(app);
  mountDocs(app);
  mountFrontPage(app);
  mountDevServer(app);

  app.notFound(notFoundOrMethodNotAllowed(app));
  app.onError((error, c) => {
    const problem = toApiError(error);
    const id = c.get("requestId");
    // Path only: query strings and headers may carry secrets and are never logged.
    if (problem.status >= 500) {
      const fields = { requestId: id, method: c.req.method, path: c.req.path, status: problem.status };
      // A 503 from D1 trouble logs what D1 said; one the code raised on purpose logs its message.
      if (problem.code === "internal_error") log.error("request_failed", fields, error);
      else log.warn("request_failed", fields, error instanceof ApiError ? problem.message : error);
    }
    return problemResponse(problem, id);
  });
  return app;
}
