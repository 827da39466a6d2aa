import type { OpenAPIHono } from "@hono/zod-openapi";
import { config } from "../config";
import type { AppEnv } from "../env";
import { pageSecurity, plainPagePolicy } from "../http/page-security";
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
 * PUBLIC_URL, never the request's Host, so no caller can put its own host into the page.
 */
export function mountFrontPage(app: OpenAPIHono<AppEnv>) {
  app.get("/", pageSecurity(plainPagePolicy("'none'")), (c) => {
    const headers = { vary: "accept", "cache-control": "no-cache" };
    if (wantsJson(c.req.header("accept"))) {
      return c.json({ name: NAME, description: SUMMARY, version: API_VERSION, reference: REFERENCE_PATH, openapi: OPENAPI_PATH }, 200, headers);
    }
    return c.html(frontPage(config(c.env).publicOrigin, c.get("cspNonce")), 200, headers);
  });
}

function frontPage(publicOrigin: string | undefined, nonce: string): string {
  const base = escapeHtml(publicOrigin ?? "https://this-service.example");
  const chats = "$BASE/v1/projects/$PROJECT/chats";
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${NAME}</title>
  <style nonce="${nonce}">
    body { font-family: system-ui, sans-serif; max-width: 56rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1d1d1f; }
    pre { background: #f4f4f6; padding: 0.75rem; overflow-x: auto; font-size: 0.85rem; }
    footer { margin-top: 2rem; color: #666; font-size: 0.9rem; }
  </style>
</head>
<body>
  <h1>${NAME}</h1>
  <p>${SUMMARY}</p>
  <p><a href="/account">Your account</a>: sign in to get an API token, and see your credits and connected apps.</p>
  <p><a href="${REFERENCE_PATH}">API reference</a> (try every operation in the browser) · <a href="${OPENAPI_PATH}">OpenAPI description</a> (JSON, for code generators)</p>
  <h2>Quickstart</h2>
  <ol>
    <li><p><strong>Get a token.</strong> Sign in for an account session, then create a personal API token (<code>pct_…</code>, shown once). In local development <code>npm run token</code> does both for the demo account.</p>
<pre>BASE=${base}
PROJECT=<var>your-project-id</var>
SESSION=$(curl -s $BASE/auth/token -H 'content-type: application/json' \\
  -d '{"email":"you@example.com","password":"…"}' | jq -r .token)
TOKEN=$(curl -s $BASE/auth/api-tokens -H "authorization: Bearer $SESSION" -H 'content-type: application/json' \\
  -d '{"name":"my script","scopes":["chat:read","chat:write"],"expiresAt":"2030-01-31T00:00:00Z"}' | jq -r .token)</pre></li>
    <li><p><strong>Send.</strong> Create a chat in your project and send it a message; the answer is 202 and the agent starts working.</p>
<pre>CHAT=$(curl -s ${chats} -H "authorization: Bearer $TOKEN" \\
  -H 'content-type: application/json' -d '{"title":"First chat"}' | jq -r .id)
curl -s ${chats}/$CHAT/messages -H "authorization: Bearer $TOKEN" \\
  -H "idempotency-key: $(uuidgen)" -H 'content-type: application/json' -d '{"content":"Hello"}'</pre></li>
    <li><p><strong>Follow.</strong> Stream the chat's events (server-sent events): the reply as it grows, then its final text.</p>
<pre>curl -N ${chats}/$CHAT/events -H "authorization: Bearer $TOKEN"</pre></li>
  </ol>
  <footer>Version ${API_VERSION}</footer>
</body>
</html>
`;
}
