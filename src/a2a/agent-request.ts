import { TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { GatedEnv } from "../auth/gate";
import { liveEventStream, liveJsonAnswer } from "../channels/live-answer";
import { chatService } from "../chats/service/chat-service";
import { ApiError, notFound } from "../http/problem";
import { isUuid } from "../ids";
import { EXTENSIONS } from "./card";
import { asRefusal, invalid, keepingErrors } from "./errors";
import { ProjectAgent } from "./project-agent";

// How long a blocking send's answer may take before the route commits to 200 and keeps the connection alive.
const ANSWER_SETTLE_MS = 1_000;

/** The version a request asks for (its A2A-Version header, or query parameter), Major.Minor only; undefined when it names none. */
export function requestedVersion(c: Context): string | undefined {
  const raw = c.req.header("a2a-version") ?? c.req.query("A2A-Version");
  if (raw === undefined || raw.trim() === "") return undefined;
  const [major, minor = "0"] = raw.trim().split(".");
  return `${major}.${minor}`;
}

const JSON_TYPES = new Set(["application/json", "application/a2a+json"]);

/** A body sent as anything but A2A's JSON types (application/json, application/a2a+json): 415 problem+json, on both bindings. */
export function requireJsonBody(c: Context): void {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!JSON_TYPES.has(type)) {
    throw new ApiError(415, "invalid_request", "Send JSON (Content-Type: application/json or application/a2a+json).", {
      errors: [{ path: "content-type", message: "not JSON" }],
    });
  }
}

/**
 * Params the SDK would read past: a task or context id present but not a string (a number, an object, an array), or a
 * ListTasks status that names no task state (the SDK reads any such as UNRECOGNIZED, which means no filter): -32602
 * naming the field, never "Task not found" or every task (ProtoJSON reads `null` as absent).
 */
export function refusedParams(params: unknown): Error | undefined {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  const message = (typeof p.message === "object" && p.message !== null ? p.message : {}) as Record<string, unknown>;
  const fields: [string, unknown][] = [
    ["id", p.id],
    ["taskId", p.taskId],
    ["message.taskId", message.taskId],
    ["message.contextId", message.contextId],
  ];
  const bad = fields.find(([, value]) => value !== undefined && value !== null && typeof value !== "string");
  if (bad) return invalid(bad[0], "must be a string.");
  // A state's name or number (TaskState maps both ways), UNRECOGNIZED and -1 included.
  if (p.status != null && (!["string", "number"].includes(typeof p.status) || !Object.hasOwn(TaskState, String(p.status)))) return invalid("status", "is not a task state.");
  return undefined;
}

/** The path's project id, lowercased; another path segment names no agent (404). */
export const projectIdOf = (c: Context) => {
  const projectId = c.req.param("projectId") ?? "";
  if (!isUuid(projectId)) throw notFound();
  return projectId.toLowerCase();
};

/** The request's resume point: Last-Event-ID (header, or lastEventId in the query), a non-negative integer. */
export function resumePoint(c: Context): number | undefined | "bad" {
  const raw = c.req.header("last-event-id") ?? c.req.query("lastEventId");
  if (raw === undefined) return undefined;
  return /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : "bad";
}

/**
 * One A2A request of an admitted caller, whichever binding: the project's agent (every error it throws kept), the
 * call context with the extensions asked for, the headers echoing those served, and the hang-up that ends its waits
 * (`live`: the answer is kept alive, as a stream or a blocking send's, so a hang-up can be noticed before the request's signal).
 */
export function agentRequest(c: Context<GatedEnv>, resume: number | undefined, version: string, live: boolean) {
  const hangUp = new AbortController();
  // Only an answer kept alive (a stream, a blocking send) notices a hang-up beyond the request's own signal.
  const gone = live ? AbortSignal.any([c.req.raw.signal, hangUp.signal]) : c.req.raw.signal;
  const projectAgent = new ProjectAgent(c, projectIdOf(c), chatService(c), gone, resume, version === "1.0" ? "1.0" : "0.3");
  const { handler: agent, errors } = keepingErrors(projectAgent, c.get("requestId"));
  const requested = (c.req.header("a2a-extensions") ?? "")
    .split(",")
    .map((uri) => uri.trim())
    .filter(Boolean);
  const context = new ServerCallContext({ requestedVersion: version, requestedExtensions: requested });
  const echoed = requested.filter((uri) => EXTENSIONS.some((extension) => extension.uri === uri));
  const headers: Record<string, string> = echoed.length > 0 ? { "a2a-extensions": echoed.join(", ") } : {};
  // The first error a method threw decides: an HTTP refusal answers as one (both bindings), anything else as the binding's error.
  const refusal = () => {
    const refused = errors.length > 0 ? asRefusal(errors[0]) : undefined;
    return refused?.respond(c.get("requestId"));
  };
  return { agent, errors, context, headers, hangUp, refusal };
}

/**
 * An event stream of a method's events. A refusal comes before its first event, so that event is awaited a moment
 * first: an error then is an ordinary answer (`early`), not an event. A first event slower than that (a resume on a
 * quiet task) does not hold the answer back: the stream's headers go out and the event follows in it. After that each
 * event is a frame, an error a last frame, and the stream is kept alive.
 */
export async function eventStream<T>(
  events: AsyncIterator<T>,
  frames: { event(event: T): string; error(error: unknown): string },
  early: (error: unknown) => Response,
  hangUp: AbortController,
  headers: Record<string, string>,
): Promise<Response> {
  const first = events.next().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const settled = await Promise.race([first, new Promise<undefined>((resolve) => setTimeout(resolve, ANSWER_SETTLE_MS))]);
  if (settled && "error" in settled) return early(settled.error);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        const opening = settled ?? (await first);
        if ("error" in opening) throw opening.error;
        if (!opening.value.done) controller.enqueue(encoder.encode(frames.event(opening.value.value)));
        for (let next = await events.next(); !next.done; next = await events.next()) controller.enqueue(encoder.encode(frames.event(next.value)));
      } catch (error) {
        controller.enqueue(encoder.encode(frames.error(error)));
      }
      controller.close();
    },
    cancel() {
      hangUp.abort();
    },
  });
  return liveEventStream(new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-store", ...headers } }), hangUp);
}

/**
 * A blocking send's answer: as it is when it comes quickly (a refusal keeps its status); else 200 at once, with the
 * headers a success has (its content type, the extensions echoed), and kept alive until it comes, so a client's hang-up
 * is noticed and frees its stream place (its refusals are all made before the wait).
 */
export async function blockingAnswer(answer: Promise<Response>, hangUp: AbortController, headers: Record<string, string>): Promise<Response> {
  const early = await Promise.race([answer, new Promise<undefined>((resolve) => setTimeout(resolve, ANSWER_SETTLE_MS))]);
  return early ?? liveJsonAnswer(answer, hangUp, headers);
}
