import type { OpenAPIHono } from "@hono/zod-openapi";
import { DEMO_SIGN_IN } from "../auth/schemas";
import { config } from "../config";
import type { AppEnv } from "../env";
import { pageSecurity, plainPagePolicy } from "../http/page-security";
import { FAVICON_PATH, mountFavicon } from "./favicon";
import { FOLLOW, LOCAL_TOKEN, SEND, tokenByHand } from "./quickstart";
import { API_VERSION, OPENAPI_PATH, REFERENCE_PATH } from "./routes";

const NAME = "Project Chat API";
const SUMMARY =
  "Chats between a project's people and an agent: send a message, follow the agent's reply as it streams, steer or stop its work, and be told by webhook when it ends.";

const escapeHtml = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** True when the client asks for JSON rather than a page (a browser's Accept names text/html). */
const wantsJson = (accept: string | undefined) => !!accept && /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);

/**
 * The front door at `/`: what the service is, where its reference lives, the three steps to a first
 * reply and the version; JSON for `Accept: application/json`. The address in the examples is
 * PUBLIC_URL, never the request's Host, so no caller can put its own host into the page. Under
 * npm run dev (DEV_SERVER_ID set) the steps use the demo account, as the README's quickstart does.
 */
export function mountFrontPage(app: OpenAPIHono<AppEnv>) {
  mountFavicon(app);
  app.get("/", pageSecurity(plainPagePolicy("'none'")), (c) => {
    const headers = { vary: "accept", "cache-control": "no-cache" };
    if (wantsJson(c.req.header("accept"))) {
      return c.json({ name: NAME, description: SUMMARY, version: API_VERSION, reference: REFERENCE_PATH, openapi: OPENAPI_PATH }, 200, headers);
    }
    const settings = config(c.env);
    return c.html(frontPage(settings.publicOrigin, settings.devServerId !== undefined, c.get("cspNonce")), 200, headers);
  });
}

const code = (text: string) => `<pre>${escapeHtml(text)}</pre>`;

function tokenStep(publicOrigin: string | undefined, local: boolean): string {
  const base = publicOrigin ?? "https://this-service.example";
  if (local) {
    return `<p><strong>Get a token.</strong> In the clone where <code>npm run dev</code> runs, <code>npm run token</code> makes one for the demo account and sets <code>BASE</code>, <code>PROJECT</code> and <code>TOKEN</code>:</p>
${code(LOCAL_TOKEN)}
<p>The same by hand, as on a deployed service: sign in, create a personal API token (<code>pct_…</code>, shown once), take the first project.</p>
${code(tokenByHand(base, DEMO_SIGN_IN.email, DEMO_SIGN_IN.password))}`;
  }
  return `<p><strong>Get a token.</strong> Sign in with your account, create a personal API token (<code>pct_…</code>, shown once) and take your first project:</p>
${code(tokenByHand(base, "you@example.com", "your password"))}`;
}

function frontPage(publicOrigin: string | undefined, local: boolean, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${NAME}</title>
  <link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
  <style nonce="${nonce}">
    body { font-family: system-ui, sans-serif; max-width: 56rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1d1d1f; }
    pre { background: #f4f4f6; padding: 0.75rem; font-size: 0.85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
    footer { margin-top: 2rem; color: #666; font-size: 0.9rem; }
  </style>
</head>
<body>
  <h1>${NAME}</h1>
  <p>${SUMMARY}</p>
  <p><a href="/account">Your account</a>: sign in to get an API token, and see your credits and connected apps.</p>
  <p><a href="${REFERENCE_PATH}">API reference</a> (try every operation in the browser) · <a href="${OPENAPI_PATH}">OpenAPI description</a> (JSON, for code generators)</p>
  <h2>Quickstart</h2>
  <p>You need <code>curl</code>, <code>jq</code> and Node (it makes the idempotency key and the token's expiry date).</p>
  <ol>
    <li>${tokenStep(publicOrigin, local)}</li>
    <li><p><strong>Send.</strong> Create a chat in the project and send it a message; the answer is 202 and the agent starts working.</p>
${code(SEND)}</li>
    <li><p><strong>Follow.</strong> Stream the chat's events (server-sent events) from its first, so the whole task shows even if it has ended: the reply as it grows, then its final text. <code>sed</code> stops at the finished reply.</p>
${code(FOLLOW)}</li>
  </ol>
  <footer>Version ${API_VERSION}</footer>
</body>
</html>
`;
}
