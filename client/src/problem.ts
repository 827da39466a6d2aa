import type { components } from "./generated/api.ts";

export type Problem = components["schemas"]["Problem"];
/** Every problem code the API answers with (RFC 9457 problem+json `code`). */
export type ProblemCode = Problem["code"];

/** A 4xx or 5xx answer of the API, as its problem document says it, or a response that was not one. */
export class ProblemError extends Error {
  readonly status: number;
  readonly code: ProblemCode | "unexpected_response";
  readonly detail: string;
  readonly errors: { path: string; message: string }[];
  readonly requestId: string | null;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | null;

  constructor(status: number, problem: Partial<Problem> | undefined, headers: Headers) {
    const detail = problem?.detail ?? `HTTP ${status}`;
    super(`${status} ${problem?.code ?? "unexpected_response"}: ${detail}`);
    this.name = "ProblemError";
    this.status = status;
    this.code = problem?.code ?? "unexpected_response";
    this.detail = detail;
    this.errors = (problem as { errors?: { path: string; message: string }[] } | undefined)?.errors ?? [];
    this.requestId = headers.get("x-request-id");
    this.retryAfter = retryAfterSeconds(headers);
  }

  /** Builds it from a response that is not ok (reads the body). */
  static async from(response: Response): Promise<ProblemError> {
    return ProblemError.of(response, await response.text().catch(() => ""));
  }

  /** Builds it from a response that is not ok and its body's text. */
  static of(response: Response, text: string): ProblemError {
    let problem: Partial<Problem> | undefined;
    try {
      problem = text ? JSON.parse(text) : undefined;
    } catch {
      problem = undefined;
    }
    return new ProblemError(response.status, problem, response.headers);
  }
}

function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}
