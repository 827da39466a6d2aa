import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { Problem } from "./problem";

type HeaderSchema = { type: "string" | "integer"; enum?: string[]; minimum?: number };
type HeaderObject = { description: string; required?: boolean; schema: HeaderSchema; example?: string };
type ResponseObject = { description: string; headers?: Record<string, { $ref: string }>; content?: Record<string, { schema: { $ref: string } }> };

export const ref = (kind: "headers" | "responses" | "schemas", name: string) => ({ $ref: `#/components/${kind}/${name}` });
const text: HeaderSchema = { type: "string" };

/** Every header the service sends, once; operations point at them by name. */
const HEADERS = {
  "x-request-id": {
    description: "The request's id: the caller's own x-request-id when it is 8-128 of [A-Za-z0-9._:-], else a fresh UUID. Problem bodies repeat it in `instance`.",
    required: true,
    schema: text,
  },
  RateLimit: {
    description: 'What is left of the token\'s rolling minute: `"per-token";r=<requests left>;t=<seconds until one frees up>` (IETF httpapi ratelimit-headers draft).',
    required: true,
    schema: text,
    example: '"per-token";r=59;t=60',
  },
  "RateLimit-Policy": { description: 'The per-token quota: `"per-token";q=<RATE_LIMIT_PER_MINUTE>;w=60`.', required: true, schema: text, example: '"per-token";q=60;w=60' },
  "Retry-After": { description: "Whole seconds to wait before trying again (at least 1).", required: true, schema: { type: "integer", minimum: 1 } },
  "WWW-Authenticate": {
    description: 'RFC 6750 challenge: `Bearer realm="…", error="invalid_token"` on 401; `error="insufficient_scope", scope="<needed scope>"` on a 403 for a missing scope.',
    schema: text,
  },
  Allow: { description: "The methods this path answers.", required: true, schema: text, example: "GET, HEAD, OPTIONS" },
  ETag: {
    description: "Strong entity tag of this representation (per language where the answer has one); send it back as If-None-Match to get 304 while it has not changed.",
    required: true,
    schema: text,
  },
  "Cache-Control": {
    description:
      "`public, max-age=60` on plans and banner lists; `public, max-age=300` on the OpenAPI document and `private, max-age=300` on the operator one (each changes only with a deploy); `no-store` on legal documents, the poll and anything carrying a secret.",
    required: true,
    schema: text,
  },
  "Content-Language": { description: "The language the plain fields are in: en, ru or es.", required: true, schema: { type: "string", enum: ["en", "ru", "es"] } },
  "Server-Timing": { description: "`catalog;desc=memory|colo|render|d1;dur=<ms>`: which layer answered and how long it waited.", schema: text },
  Vary: { description: "Accept-Language: a cache keeps one copy per language.", schema: text },
  "Chat-Event-Id": {
    description: "The newest event id of the chat whose effects this answer already shows: open the event stream with `after=` it to miss nothing and repeat nothing.",
    required: true,
    schema: text,
    example: "42",
  },
  Location: { description: "The URL path of what was made (a fork: the new chat).", required: true, schema: text },
  "Idempotency-Replayed": {
    description: "`true` when this is the stored first answer to an earlier request with the same idempotency-key.",
    schema: { type: "string", enum: ["true"] },
  },
  "Set-Cookie": {
    description: "On a sign-in from an APP_ORIGINS origin: `session=<pcs_…>; HttpOnly; Secure; SameSite=None; Partitioned; Path=/auth`; on sign-out, the same cookie expired.",
    schema: text,
  },
} satisfies Record<string, HeaderObject>;
export type HeaderName = keyof typeof HEADERS;

/** Response header entries pointing at the shared header components. */
export const headers = (...names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, ref("headers", name)]));

/** The If-None-Match request header of an operation that answers 304. */
export const ifNoneMatch = (description: string) => ({ name: "If-None-Match", in: "header" as const, required: false, description, schema: { type: "string" as const } });

/** A 304 answer: no body, and the validator and caching headers its 200 carries. */
export const notModified = (...names: HeaderName[]) => ({ description: "Not modified: If-None-Match matched the ETag; no body", headers: headers(...names) });

const problem = (description: string, ...extra: HeaderName[]): ResponseObject => ({
  description,
  headers: headers("x-request-id", ...extra),
  content: { "application/problem+json": { schema: ref("schemas", "Problem") } },
});

/** One named response per problem status; `problems()` refers to them. */
const RESPONSES = {
  BadRequest: problem(
    "Invalid input (`invalid_request`): a body that is not JSON or breaks the schema, an unknown field or query parameter; `errors[]` lists the invalid fields, the first 20 found (each path and message cut to at most 300 bytes of JSON; the detail gives the count when there are more).",
  ),
  Unauthorized: problem("Missing, malformed, expired or revoked credentials (`unauthorized`).", "WWW-Authenticate"),
  Forbidden: problem("The token lacks the scope (`insufficient_scope`, with WWW-Authenticate naming it) or the account's role may not write (`forbidden`).", "WWW-Authenticate"),
  NotFound: problem(
    "No such resource, or not available to the caller (`not_found`; `message_not_found` or `submission_not_found` for an id in a chat that is available); existence is not revealed.",
  ),
  MethodNotAllowed: problem("The path exists but not with this method (`method_not_allowed`).", "Allow"),
  Conflict: problem(
    "The request conflicts with the current state (`conflict`, `chat_archived`, `idempotency_key_reused`, `submission_cancelled`, `submission_started`, `queue_full`, `token_limit_reached`, `webhook_limit_reached`).",
  ),
  ContentTooLarge: problem("The body is larger than the limit of this path (`payload_too_large`)."),
  TooManyRequests: problem("Too many requests (`rate_limited`), or, opening an event stream, too many open at once (`too_many_streams`); wait Retry-After seconds.", "Retry-After"),
  InternalError: problem("Something failed on the service's side (`internal_error`); quote the x-request-id."),
  ServiceUnavailable: problem(
    "Not available right now (`service_unavailable`): the catalog is not loaded yet, or the database cannot be reached; try again after Retry-After.",
    "Retry-After",
  ),
} satisfies Record<string, ResponseObject>;
type ResponseName = keyof typeof RESPONSES;

const PROBLEM_RESPONSE_BY_STATUS = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  413: "ContentTooLarge",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
} as const satisfies Record<number, ResponseName>;
export type ProblemStatus = keyof typeof PROBLEM_RESPONSE_BY_STATUS;

/** Response entries for the problem statuses an operation can answer, each a reference to its named response. */
export const problems = (...statuses: ProblemStatus[]) => Object.fromEntries(statuses.map((status) => [status, ref("responses", PROBLEM_RESPONSE_BY_STATUS[status])]));

const SECURITY_SCHEMES = {
  userApiTokenBearer: { type: "http", scheme: "bearer", description: "A personal API token (pct_…) from POST /auth/api-tokens, with the chat:read and/or chat:write scope" },
  accountSessionBearer: { type: "http", scheme: "bearer", description: "An account session token (pcs_…) from POST /auth/token" },
  adminBearer: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN (operators only)" },
} as const;

/** Registers every shared component; each document keeps only those it uses. */
export function registerComponents(registry: OpenAPIRegistry) {
  registry.register("Problem", Problem);
  for (const [name, header] of Object.entries(HEADERS)) registry.registerComponent("headers", name, header);
  for (const [name, response] of Object.entries(RESPONSES)) registry.registerComponent("responses", name, response);
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) registry.registerComponent("securitySchemes", name, scheme);
}
