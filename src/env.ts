import type { TimingVariables } from "hono/timing";

/**
 * Bindings and the vars wrangler.jsonc declares are typed by `wrangler types` (worker-configuration.d.ts,
 * `npm run types`); secrets and optional vars, which it cannot see, are declared here. Read vars
 * through config() (src/config.ts), which parses them once with their defaults.
 */
declare global {
  namespace Cloudflare {
    interface Env {
      ADMIN_TOKEN?: string;
      APP_ORIGINS?: string;
      PUBLIC_URL?: string;
      AGENT_URL?: string;
      AGENT_SECRET?: string;
      AGENT_TIMEOUT_SECONDS?: string;
      AGENT_BASE_URL?: string;
      AGENT_API_KEY?: string;
      AGENT_SYSTEM_PROMPT?: string;
      AGENT_TOOLS?: string;
      AGENT_USAGE?: string;
      AGENT_HISTORY_CHARS?: string;
      // Seals webhook endpoints' signing secrets (AES-GCM); a Worker secret.
      WEBHOOK_KEY?: string;
      // Seals what MCP clients hold and send back (AES-256-GCM, 32 bytes as base64url); a Worker secret. The previous key only opens.
      MCP_STATE_KEY?: string;
      MCP_STATE_KEY_PREVIOUS?: string;
      MCP_INPUT_TTL_SECONDS?: string;
      // "true" lets webhooks point at http://localhost (npm run dev sets it; production never).
      WEBHOOK_ALLOW_LOOPBACK?: string;
      // A fresh value per wrangler dev that the project's scripts start, answered at /dev/server (never deployed).
      DEV_SERVER_ID?: string;
    }
  }
}

export type Env = Cloudflare.Env;
// metric: what Hono's timing middleware (http/server-timing.ts) measured of the answer so far.
export type AppEnv = { Bindings: Env; Variables: { requestId: string } & Partial<TimingVariables> };
