import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "@hono/zod-openapi";
import type { $ZodError as ZodError } from "zod/v4/core";
import { isDatabaseUnavailable } from "../db/errors";

/** The stable problem codes; ApiError and the OpenAPI Problem schema both take them from here. */
export const PROBLEM_CODES = [
  "invalid_request",
  "unauthorized",
  "insufficient_scope",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "chat_archived",
  "idempotency_key_reused",
  "token_limit_reached",
  "rate_limited",
  "too_many_streams",
  "message_not_found",
  "submission_not_found",
  "submission_cancelled",
  "submission_started",
  "queue_full",
  "chat_busy",
  "token_credit_limit",
  "question_not_found",
  "question_not_pending",
  "answer_does_not_fit",
  "message_working",
  "fork_too_long",
  "webhook_limit_reached",
  "payload_too_large",
  "service_unavailable",
  "internal_error",
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

// A missing field reads "required" in errors[] rather than zod's "expected string, received undefined".
z.config({ customError: (issue) => (issue.code === "invalid_type" && issue.input === undefined ? "required" : undefined) });

export const FieldProblem = z.object({ path: z.string(), message: z.string() });
export type FieldProblem = z.infer<typeof FieldProblem>;

export const Problem = z
  .object({
    type: z.string().openapi({ description: "A URN naming the problem kind: urn:project-chat:problem:<code>" }),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string().openapi({ description: "What went wrong, for a human" }),
    code: z.enum(PROBLEM_CODES).openapi({ description: "Stable identifier to branch on" }),
    instance: z.string().openapi({ description: "This occurrence: urn:request:<x-request-id>; quote it when reporting a problem", example: "urn:request:3f1c…" }),
    errors: z.array(FieldProblem).optional().openapi({ description: "Each invalid field of a 400 invalid_request" }),
  })
  .openapi("Problem", { description: "RFC 9457 problem details" });

/** The one error type handlers throw; app.onError turns it into RFC 9457 problem+json. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ProblemCode,
    detail: string,
    readonly options: { headers?: Record<string, string>; errors?: FieldProblem[] } = {},
  ) {
    super(detail);
  }
}

/** The RFC 9457 body of a problem; `instance` names the request by its x-request-id. */
export function problemBody(error: ApiError, requestId: string): z.infer<typeof Problem> {
  return {
    type: `urn:project-chat:problem:${error.code}`,
    title: TITLES[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    code: error.code,
    instance: `urn:request:${requestId}`,
    ...(error.options.errors ? { errors: error.options.errors } : {}),
  };
}

/** The problem+json answer. */
export function problemResponse(error: ApiError, requestId: string): Response {
  return new Response(JSON.stringify(problemBody(error, requestId)), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...error.options.headers },
  });
}

type Target = "json" | "query" | "header" | "param" | string;
const ROOTS: Record<string, string> = { json: "(body)", query: "(query)", header: "(headers)", param: "(path)", arguments: "(arguments)" };

// A problem answer stays small whatever the body: the first errors found, each cut short.
export const FIELD_PROBLEMS_MAX = 20;
// Counted as sent, escapes included: a key of control characters takes six bytes per character in JSON.
export const FIELD_TEXT_MAX_BYTES = 300;
const utf8 = new TextEncoder();

/** The longest start of text whose JSON string content stays within maxBytes (a pair of surrogates is never cut in two). */
function cut(text: string, maxBytes: number): string {
  if (text.length * 6 <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += utf8.encode(JSON.stringify(char)).byteLength - 2;
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * One entry per invalid field, the first FIELD_PROBLEMS_MAX found; an unknown key is named itself
 * (`other`), not its parent object. `total` counts them all.
 */
export function fieldProblems(error: ZodError, target: Target = "json"): { errors: FieldProblem[]; total: number } {
  const at = (path: PropertyKey[]) => (path.length ? path.map(String).join(".") : (ROOTS[target] ?? "(request)"));
  const errors: FieldProblem[] = [];
  let total = 0;
  const add = (path: PropertyKey[], message: string) => {
    total++;
    if (errors.length < FIELD_PROBLEMS_MAX) errors.push({ path: cut(at(path), FIELD_TEXT_MAX_BYTES), message: cut(message, FIELD_TEXT_MAX_BYTES) });
  };
  for (const issue of error.issues) {
    if (issue.code !== "unrecognized_keys") add(issue.path, issue.message);
    else for (const key of issue.keys) add([...issue.path, key], target === "query" ? "unknown query parameter" : "unknown field");
  }
  return { errors, total };
}

export const invalidRequest = (detail: string, errors?: FieldProblem[]) => new ApiError(400, "invalid_request", detail, { errors });
/** 401 with its RFC 6750 challenge; error is left out where no credential was presented (a password sign-in). */
export const unauthorized = (realm: "api" | "account" | "admin" | "agent", detail: string, error: "invalid_token" | null = "invalid_token") =>
  new ApiError(401, "unauthorized", detail, { headers: { "www-authenticate": `Bearer realm="${realm}"${error ? `, error="${error}"` : ""}` } });
export const notFound = (detail = "The resource does not exist or is not available to you.") => new ApiError(404, "not_found", detail);

const WHERES: Record<string, string> = { json: "request body is", query: "query string is", header: "request headers are", param: "path is" };

/** A request part that failed its schema: 400 invalid_request listing each invalid field. */
export function invalidPart(error: ZodError, target: Target = "json"): ApiError {
  const where = WHERES[target] ?? "request is";
  const { errors, total } = fieldProblems(error, target);
  const shown = total > errors.length ? ` (${total} problems; the first ${errors.length} are listed)` : "";
  return invalidRequest(`The ${where} invalid${shown}.`, errors);
}

/** The zod validator hook: the same problem body as every other error, listing each invalid field. */
export function validationHook(result: { success: boolean; error?: ZodError; target?: string }, _c: Context): void {
  if (!result.success && result.error) throw invalidPart(result.error, result.target);
}

// Long enough for a reset D1 to come back; short enough that clients do not give up on a brief outage.
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Maps anything thrown to an ApiError; D1 being unreachable is a 503, other unknown errors a 500 without internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError(503, "service_unavailable", "The service cannot reach its database right now; try again shortly.", {
      headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) },
    });
  }
  if (error instanceof HTTPException) {
    if (error.status === 415) return invalidRequest("The request body must be JSON, sent with Content-Type: application/json.");
    if (error.status === 413) return new ApiError(413, "payload_too_large", "The request body is too large.");
    if (error.status === 400) return invalidRequest(error.message || "The request is invalid.");
    return new ApiError(error.status as ContentfulStatusCode, error.status === 401 ? "unauthorized" : "invalid_request", error.message);
  }
  return new ApiError(500, "internal_error", "Something went wrong on our side. Quote the request id when reporting it.");
}
