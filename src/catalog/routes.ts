import { createRoute, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { config } from "../config";
import type { AppEnv } from "../env";
import { resolveLanguage } from "./language";
import { publicCors } from "../http/middleware";
import { matchesIfNoneMatch } from "../http/etag";
import { ApiError } from "../http/problem";
import { anonymous, createRouter, ifNoneMatch, jsonResponse, notModified, problems } from "../http/router";
import { renderCached, type CatalogEndpoint } from "./cache";
import { renderBanners, renderLegalDocument, renderPlans, renderPoll } from "./render";
import { ChatBanner, LegalDocument, PageTopBanner, PlanCatalog, PollResponse, type CatalogDocument, type Language } from "./schema";

type Endpoint = {
  name: CatalogEndpoint;
  operationId: string;
  path: string;
  summary: string;
  schema: z.ZodType;
  // Legal texts and the poll must be fetched fresh by browsers; the lists may be reused for a minute.
  cacheControl: string;
  render: (doc: CatalogDocument | null, language: Language, env: AppEnv["Bindings"]) => unknown;
};

const LISTS = "public, max-age=60";
const FRESH = "no-store";

const endpoints: Endpoint[] = [
  {
    name: "plans",
    operationId: "getPlans",
    path: "/plans",
    summary: "The plan catalog: the free plan and the active paid plans",
    schema: PlanCatalog,
    cacheControl: LISTS,
    render: (doc, language) => {
      if (!doc) throw new ApiError(503, "service_unavailable", "The plan catalog has not been loaded yet.", { headers: { "retry-after": "60" } });
      return renderPlans(doc, language);
    },
  },
  {
    name: "privacy-policy",
    operationId: "getPrivacyPolicy",
    path: "/privacy-policy",
    summary: "The privacy policy",
    schema: LegalDocument,
    cacheControl: FRESH,
    render: (doc, language) => renderLegalDocument(doc?.privacyPolicy ?? emptyLegalDocument, language),
  },
  {
    name: "terms-of-use",
    operationId: "getTermsOfUse",
    path: "/terms-of-use",
    summary: "The terms of use",
    schema: LegalDocument,
    cacheControl: FRESH,
    render: (doc, language) => renderLegalDocument(doc?.termsOfUse ?? emptyLegalDocument, language),
  },
  {
    name: "chat-banners",
    operationId: "listChatBanners",
    path: "/chat-banners",
    summary: "Active chat banners in stored order",
    schema: ChatBanner.array(),
    cacheControl: LISTS,
    render: (doc, language, env) => renderBanners(doc?.chatBanners ?? [], language, config(env).appOrigin),
  },
  {
    name: "page-top-banners",
    operationId: "listPageTopBanners",
    path: "/chat-banners/page-top",
    summary: "Active page-top banners in stored order",
    schema: PageTopBanner.array(),
    cacheControl: LISTS,
    render: (doc, language, env) => renderBanners(doc?.pageTopBanners ?? [], language, config(env).appOrigin),
  },
  {
    name: "poll",
    operationId: "getPoll",
    path: "/poll",
    summary: "The enabled questionnaire, or null",
    schema: PollResponse,
    cacheControl: FRESH,
    render: (doc, language) => (doc ? renderPoll(doc, language) : { poll: null }),
  },
];

// An empty body means the document is not published (spec, "Legal document").
const emptyLegalDocument = { contentMarkdownEn: "", contentMarkdownRu: "", contentMarkdownEs: "", acceptanceUpdateTitle: "" };

async function serve(c: Context<AppEnv>, endpoint: Endpoint): Promise<Response> {
  const language = resolveLanguage(c.req.header("accept-language"));
  const started = Date.now();
  const { body, etag, source } = await renderCached(c.env, c.executionCtx, endpoint.name, language, (doc) => endpoint.render(doc, language, c.env));
  const headers = {
    // Workers clocks move only across I/O, so dur is the time spent waiting on the cache or D1.
    "server-timing": `catalog;desc=${source};dur=${Date.now() - started}`,
    "cache-control": endpoint.cacheControl,
    "content-language": language,
    vary: "Accept-Language",
    etag,
  };
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { status: 200, headers: { ...headers, "content-type": "application/json; charset=utf-8" } });
}

/** The anonymous catalog, mounted at /v1: any origin may read it, never with credentials. */
export const catalogRoutes = createRouter();
for (const endpoint of endpoints) catalogRoutes.use(endpoint.path, publicCors);
const CATALOG_HEADERS = ["ETag", "Cache-Control", "Content-Language", "Vary", "Server-Timing"] as const;

for (const endpoint of endpoints) {
  const route = createRoute({
    method: "get",
    path: endpoint.path,
    operationId: endpoint.operationId,
    tags: ["Public catalog"],
    security: anonymous,
    summary: endpoint.summary,
    description: "Anonymous. Language from Accept-Language (en, ru, es; English otherwise). HEAD gives the headers alone; OPTIONS answers CORS preflight.",
    parameters: [
      {
        name: "Accept-Language",
        in: "header",
        required: false,
        description: "RFC 9110 language preferences; en, ru and es are served",
        schema: { type: "string" },
        example: "ru-RU,ru;q=0.9,en;q=0.8",
      },
      ifNoneMatch("An ETag from an earlier answer in the same language: a match answers 304"),
    ],
    responses: {
      200: jsonResponse(endpoint.schema, "The resource in the request language", ...CATALOG_HEADERS),
      304: notModified(...CATALOG_HEADERS),
      ...(endpoint.name === "plans" ? problems(503) : {}),
    },
  });
  catalogRoutes.openapi(route, (c) => serve(c, endpoint) as never);
}
