import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";

export type ProblemCode =
  | "invalid_request" | "unauthorized" | "insufficient_scope" | "forbidden" | "not_found"
  | "method_not_allowed" | "conflict" | "chat_archived" | "idempotency_key_reused"
  | "token_limit_reached" | "rate_limited" | "payload_too_large" | "service_unavailable" | "internal_error";

const TITLES: Record<number, string> = {
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  409: "Conflict", 413: "Content Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
};

export type FieldProblem = { path: string; message: string };

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

export function problemResponse(error: ApiError, requestId?: string): Response {
  const body = {
    type: `urn:project-chat:problem:${error.code}`,
    title: TITLES[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(requestId ? { instance: `urn:request:${requestId}` } : {}),
    ...(error.options.errors ? { errors: error.options.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...error.options.headers },
  });
}

type Target = "json" | "query" | "header" | "param" | string;
const ROOTS: Record<string, string> = { json: "(body)", query: "(query)", header: "(headers)", param: "(path)" };

/** One entry per invalid field; an unknown key is named itself (`other`), not its parent object. */
export function fieldProblems(error: ZodError, target: Target = "json"): FieldProblem[] {
  const at = (path: PropertyKey[]) => (path.length ? path.map(String).join(".") : (ROOTS[target] ?? "(request)"));
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: at([...issue.path, key]), message: target === "query" ? "unknown query parameter" : "unknown field" }))
      : [{ path: at(issue.path), message: issue.message }],
  );
}

export const invalidRequest = (detail: string, errors?: FieldProblem[]) => new ApiError(400, "invalid_request", detail, { errors });
export const notFound = (detail = "The resource does not exist or is not available to you.") => new ApiError(404, "not_found", detail);

/** The zod validator hook: the same problem body as every other error, listing each invalid field. */
export function validationHook(result: { success: boolean; error?: ZodError; target?: string }, _c: Context): void {
  if (!result.success && result.error) {
    const where = result.target === "json" ? "request body" : result.target === "query" ? "query string" : result.target ?? "request";
    throw invalidRequest(`The ${where} is invalid.`, fieldProblems(result.error, result.target));
  }
}

/** Maps anything thrown to an ApiError; unknown errors become a 500 without internals. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 415) return invalidRequest("The request body must be JSON, sent with Content-Type: application/json.");
    if (error.status === 413) return new ApiError(413, "payload_too_large", "The request body is too large.");
    if (error.status === 400) return invalidRequest(error.message || "The request is invalid.");
    return new ApiError(error.status as ContentfulStatusCode, error.status === 401 ? "unauthorized" : "invalid_request", error.message);
  }
  return new ApiError(500, "internal_error", "Something went wrong on our side. Quote the request id when reporting it.");
}
