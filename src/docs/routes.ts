import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { devDependencies, version } from "../../package.json";
import { adminSecurity } from "../admin/guard";
import { DEMO_SIGN_IN } from "../auth/schemas";
import { config } from "../config";
import type { AppEnv } from "../env";
import { matchesIfNoneMatch, strongEtag } from "../http/etag";
import { publicCors } from "../http/middleware";
import { pageSecurity } from "../http/page-security";
import { notFound } from "../http/problem";
import { anonymous, ifNoneMatch, jsonResponse, jsonText, notModified, problems } from "../http/router";
import { MESSAGE_BODY_LIMIT_BYTES } from "../chats/schemas";
import { FAVICON_PATH } from "./favicon";
import { describeApi, type Audience } from "./openapi-document";
import { DEMO_PROJECT_ID } from "../projects/schemas";

export const API_VERSION = version;
export const OPENAPI_PATH = "/v1/openapi.json";
export const REFERENCE_PATH = "/v1/docs";
const OPERATOR_OPENAPI_PATH = "/admin/openapi.json";
// The bundle's URL names its pinned version, so browsers may keep it for a year.
const SCALAR_VERSION = devDependencies["@scalar/api-reference"];
export const REFERENCE_SCRIPT_PATH = `/v1/docs/assets/scalar-${SCALAR_VERSION}.js`;

const INFO: Record<Audience, { title: string; description: string }> = {
  public: {
    title: "Project Chat API v1",
    description: [
      "Project chats, personal API tokens and the anonymous public catalog.",
      [
        "**Getting a token.** The chat operations take a personal API token (`pct_…`) as `Authorization: Bearer`. A person makes",
        "one on the account page at `/account`. A script signs in with",
        "`POST /auth/token` (an account session, `pcs_…`), then creates the token with `POST /auth/api-tokens` using that session;",
        "its secret is shown only in that answer. In local development (`npm run dev`) `npm run token` does both for the demo",
        `account, and the examples here are the demo data: \`${DEMO_SIGN_IN.email}\` / \`${DEMO_SIGN_IN.password}\` and the project`,
        `\`${DEMO_PROJECT_ID}\`. In this reference, paste the token into Authentication's Bearer Token field (\`userApiTokenBearer\`).`,
      ].join(" "),
      "Errors are RFC 9457 problem+json (the `Problem` schema): branch on `code`; `instance` is `urn:request:<x-request-id>`.",
      `Request bodies may be up to ${MESSAGE_BODY_LIMIT_BYTES} bytes under /v1/projects/{projectId}/chats (the largest valid message, every character sent as a 12-byte \\uXXXX\\uXXXX escape pair) and 1 MiB on the project's other routes and on /auth/*; larger ones get 413.`,
      "Operator operations (/admin/*) are described separately, at GET /admin/openapi.json behind ADMIN_TOKEN.",
    ].join("\n\n"),
  },
  operator: {
    title: "Project Chat operator API",
    description: "The /admin/* operations, for operators holding ADMIN_TOKEN; /admin/* answers 404 while ADMIN_TOKEN is unset. Bodies may be up to 16 MiB.",
  },
};

// Each document changes only with a deploy: a cache may keep it five minutes, then revalidate it with its ETag (a 304).
type Served = { path: string; operationId: string; summary: string; tag: string; security: Record<string, string[]>[]; cacheControl: string };
const SERVED: Record<Audience, Served> = {
  public: {
    path: OPENAPI_PATH,
    operationId: "getOpenApiDocument",
    summary: "This OpenAPI document",
    tag: "API description",
    security: anonymous,
    cacheControl: "public, max-age=300",
  },
  // Read with ADMIN_TOKEN: only the operator's own cache may keep it.
  operator: {
    path: OPERATOR_OPENAPI_PATH,
    operationId: "getOperatorOpenApiDocument",
    summary: "The operator OpenAPI document",
    tag: "Admin",
    security: adminSecurity,
    cacheControl: "private, max-age=300",
  },
};
const DOCUMENT_HEADERS = ["ETag", "Cache-Control"] as const;

// Not repeated here: the document's shape is the OpenAPI 3.1 specification's.
const OpenApiDocument = z
  .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) })
  .openapi("OpenApiDocument", { description: "An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)." });

/** Serves the two OpenAPI documents and the offline API reference page; mounted after every other route. */
export function mountDocs(app: OpenAPIHono<AppEnv>) {
  // One document per audience: the server address is PUBLIC_URL or "/", never the request's Host, so no caller can
  // put its own host into the document or make the isolate keep a document per Host value.
  // Kept as JSON text with its ETag, both made once per isolate: serving it is a copy, not a serialisation of some 200 KB per request.
  // The value is kept, not a promise of it: a request must not await work begun on behalf of another.
  const documents = new Map<Audience, { text: string; etag: string }>();
  const built = async (c: Context<AppEnv>, audience: Audience) => {
    const held = documents.get(audience);
    if (held) return held;
    const text = JSON.stringify(describeApi(app, audience, { ...INFO[audience], version: API_VERSION }, config(c.env).publicOrigin));
    const document = { text, etag: await strongEtag(text) };
    documents.set(audience, document);
    return document;
  };
  app.use(OPENAPI_PATH, publicCors);
  for (const [audience, served] of Object.entries(SERVED) as [Audience, Served][]) {
    const route = createRoute({
      method: "get",
      path: served.path,
      operationId: served.operationId,
      tags: [served.tag],
      security: served.security,
      summary: served.summary,
      description: `Changes only with a deploy: \`Cache-Control: ${served.cacheControl}\` and a strong ETag; If-None-Match with it answers 304 with no body.`,
      parameters: [ifNoneMatch("The ETag of a copy already held: a match answers 304")],
      responses: {
        200: jsonResponse(OpenApiDocument, "The document", ...DOCUMENT_HEADERS),
        304: notModified(...DOCUMENT_HEADERS),
        ...(audience === "operator" ? problems(401, 404) : {}),
      },
    });
    app.openapi(route, async (c) => {
      const { text, etag } = await built(c, audience);
      const headers = { etag, "cache-control": served.cacheControl };
      if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers) as never;
      return jsonText(c, text, 200, headers) as never;
    });
  }

  app.get(REFERENCE_PATH, pageSecurity(referencePolicy), (c) => c.html(referencePage(c.get("cspNonce")), 200, { "cache-control": "no-cache" }));
  app.get(REFERENCE_SCRIPT_PATH, async (c) => {
    const asset = await c.env.ASSETS.fetch(new Request(new URL("/scalar.js", c.req.url)));
    if (!asset.ok) throw notFound("The API reference bundle is missing: run npm install, which copies it to dist/docs-assets.");
    return new Response(asset.body, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=31536000, immutable" } });
  });
}

/**
 * People paste tokens here: scripts only from this Worker (the pinned bundle) and the one inline call by its nonce,
 * requests only to this origin (the document and try-it calls). Scalar injects its styles and icons at run time.
 */
const referencePolicy = (nonce: string) =>
  `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'`;

/** The reference page: Scalar from this Worker (no CDN), and a plain link to the JSON for readers without scripts. */
function referencePage(nonce: string): string {
  // Nothing that reaches beyond this Worker: no web fonts, telemetry, hosted AI agent or MCP service.
  const config = JSON.stringify({
    url: OPENAPI_PATH,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    defaultOpenAllTags: true,
    showOperationId: true,
    // For API users: the token field is open from the start, and Scalar's own toolbar (Configure, Share, Deploy) is not shown.
    authentication: { preferredSecurityScheme: "userApiTokenBearer" },
    showDeveloperTools: "never",
  });
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${INFO.public.title} reference</title>
  <link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
</head>
<body>
  <p id="fallback" style="font-family: system-ui, sans-serif; margin: 1rem;">
    The OpenAPI description: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>
  </p>
  <noscript><p>The interactive reference needs JavaScript; the JSON above describes every operation.</p></noscript>
  <div id="app"></div>
  <script src="${REFERENCE_SCRIPT_PATH}"></script>
  <script nonce="${nonce}">Scalar.createApiReference("#app", ${config}); document.getElementById("fallback").remove();</script>
</body>
</html>
`;
}
