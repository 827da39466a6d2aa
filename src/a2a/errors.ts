import { A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { ERROR_INFO_TYPE } from "@a2a-js/sdk/errors";
import { log } from "../log";
import { ApiError, type ProblemCode, problemResponse } from "../http/problem";

/** The problem code's domain in an A2A error's details: the /v1 code that explains it. */
const PROJECT_DOMAIN = "project-chat";

/** A refusal answered at the HTTP level on both bindings (credentials, rate, scope, role, streams), as on /v1 and /mcp. */
export class HttpRefusal extends Error {
  constructor(readonly respond: (requestId: string) => Response) {
    super("refused at the HTTP level");
  }

  static ofApiError(error: ApiError): HttpRefusal {
    return new HttpRefusal((requestId) => problemResponse(error, requestId));
  }
}

/** An A2A error that also names the /v1 problem code behind it. */
const withReason = <E extends A2AError>(error: E, code: string): E => Object.assign(error, { projectReason: code.toUpperCase() });

/** The /v1 code an A2A error carries, for the second ErrorInfo of its details. */
const projectReasonOf = (error: unknown): string | undefined => (error as { projectReason?: string } | undefined)?.projectReason;

/** The detail entry naming a /v1 code. */
const projectDetail = (reason: string) => ({ "@type": ERROR_INFO_TYPE, reason, domain: PROJECT_DOMAIN });

type FieldViolation = { field: string; description: string };
/** What an error's details hold besides A2A's own ErrorInfo: the fields it is about (google.rpc.BadRequest, at most 20), the /v1 code behind it. */
export function extraDetailsOf(error: unknown): ({ "@type": string } & Record<string, unknown>)[] {
  const violations = (error as { fieldViolations?: FieldViolation[] } | undefined)?.fieldViolations;
  const reason = projectReasonOf(error);
  return [...(violations ? [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: violations.slice(0, 20) }] : []), ...(reason ? [projectDetail(reason)] : [])];
}

/** -32602 about one field of the params: named first in the message, and as a google.rpc.BadRequest field violation. */
export const invalid = (field: string, description: string) =>
  Object.assign(new RequestMalformedError({ message: `${field} ${description}` }), { fieldViolations: [{ field, description }] });

/** The one answer for a task, chat or project the caller cannot reach: the same bytes whether it is foreign, made up or gone. */
export const taskNotFound = () => new TaskNotFoundError({ message: "Task not found" });

export const malformed = (message: string, code?: string) => {
  const error = new RequestMalformedError({ message });
  return code ? withReason(error, code) : error;
};

export const unsupported = (message: string, code?: string) => {
  const error = new UnsupportedOperationError({ message });
  return code ? withReason(error, code) : error;
};

const HTTP_LEVEL = new Set<ProblemCode>(["unauthorized", "insufficient_scope", "forbidden", "rate_limited", "too_many_streams", "payload_too_large", "service_unavailable"]);
const MALFORMED = new Set<ProblemCode>(["invalid_request", "answer_does_not_fit", "idempotency_key_reused"]);

/** A refusal of the chat service as the A2A answer, by its kind: an HTTP-level refusal, or an A2A error. */
export function fromRefusal(problem: ApiError): Error {
  if (HTTP_LEVEL.has(problem.code)) return HttpRefusal.ofApiError(problem);
  if (problem.status === 404) return taskNotFound();
  if (MALFORMED.has(problem.code)) return malformed(problem.message, problem.code === "invalid_request" ? undefined : problem.code);
  if (problem.status >= 500) return new Error(problem.message);
  return unsupported(problem.message, problem.code);
}

/** An error a method threw, as the request answers it: an HTTP refusal (an ApiError other than not found is one), or left to the transport. */
export const asRefusal = (error: unknown): HttpRefusal | undefined =>
  error instanceof HttpRefusal ? error : error instanceof ApiError && error.status !== 404 ? HttpRefusal.ofApiError(error) : undefined;

type Handler = object;

/**
 * The request handler with every error a method throws (or its stream throws) kept, since the transport turns each into
 * a JSON-RPC error: the route answers an HTTP refusal as one, and adds the /v1 code behind an A2A error to its details.
 */
export function keepingErrors<H extends Handler>(handler: H, requestId: string): { handler: H; errors: unknown[] } {
  const errors: unknown[] = [];
  const keep = (error: unknown) => {
    // Anything that is not an answer (an A2A error, an HTTP refusal) is a fault: logged, and shown without its text.
    const expected = error instanceof A2AError || error instanceof HttpRefusal || error instanceof ApiError;
    if (!expected) log.error("a2a_request_failed", { requestId }, error);
    const shown = expected ? error : new Error(`Internal error: request ${requestId}`);
    errors.push(shown);
    return shown;
  };
  const wrapped = new Proxy(handler, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(keep(error)));
        if (result && typeof result === "object" && Symbol.asyncIterator in result) {
          return (async function* () {
            try {
              yield* result as AsyncGenerator<unknown>;
            } catch (error) {
              throw keep(error);
            }
          })();
        }
        return result;
      };
    },
  });
  return { handler: wrapped, errors };
}
