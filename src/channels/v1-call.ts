import type { Context } from "hono";
import { bindingsAdmitting, type GatedEnv } from "../auth/gate";
import type { Env } from "../env";
import { invalidRequest, problemResponse, unauthorized } from "../http/problem";

/** The Worker's own fetch: a tool's call goes through the very route a /v1 client calls. */
export type AppFetch = (request: Request, env: Env, ctx: Context["executionCtx"]) => Response | Promise<Response>;

/**
 * A /v1 answer: the JSON of a success, or the problem+json text of a failure, as it was sent. eventId:
 * its Chat-Event-Id, where the route sends one (the newest chat event whose effects it shows).
 */
export type V1Answer<T = unknown> = { ok: true; body: T; replayed: boolean; eventId?: number } | { ok: false; problem: string; retryAfter?: string };

type V1Request = { query?: Record<string, string | undefined>; body?: unknown; headers?: Record<string, string> };
export type CallV1 = <T = unknown>(method: string, path: string, request?: V1Request) => Promise<V1Answer<T>>;
/** A GET whose success is a stream (a chat's events): the body itself, not read, for the caller to read and cancel. */
export type OpenV1Stream = (path: string, query?: Record<string, string>) => Promise<V1Answer<ReadableStream<Uint8Array>>>;

/**
 * What the tools of one /mcp request may do as its caller: call /v1, open a /v1 stream, and ask
 * whether the caller is still admitted (or the 401 problem /v1 would answer it now).
 */
export type V1Access = { call: CallV1; open: OpenV1Stream; stillAdmitted(): Promise<V1Answer<null>> };

/**
 * Path segments from tool arguments are escaped, so an id can never reach another route; `.` and
 * `..` survive escaping and URL resolution would follow them, so they (and an empty segment) are refused.
 */
export function v1Path(...segments: string[]): string {
  const bad = segments.find((segment) => segment === "" || segment === "." || segment === "..");
  if (bad !== undefined) throw invalidRequest(`An id may not be ${JSON.stringify(bad)}.`, [{ path: "(arguments)", message: "not an id" }]);
  return `/v1/projects/${segments.map(encodeURIComponent).join("/")}`;
}

/**
 * Calls /v1 in-process for the caller this /mcp request was admitted as: the route checks scope,
 * project access and role as for any client, and the gate counts nothing more. Problems keep this
 * request's id as their instance.
 */
export function v1Access(c: Context<GatedEnv>, appFetch: AppFetch, caller = c.get("caller")): V1Access {
  const env = bindingsAdmitting(c.env, caller);
  const fetchV1 = (method: string, path: string, request: V1Request) => {
    const url = new URL(path, c.req.url);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers = new Headers({ ...request.headers, "x-request-id": c.get("requestId") });
    if (request.body !== undefined) headers.set("content-type", "application/json");
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    return appFetch(new Request(url, { method, headers, body }), env, c.executionCtx);
  };
  const call = async <T>(method: string, path: string, request: V1Request = {}): Promise<V1Answer<T>> => {
    const response = await fetchV1(method, path, request);
    const text = await response.text();
    if (!response.ok) return { ok: false, problem: text };
    const eventId = response.headers.get("chat-event-id");
    const body = (text ? JSON.parse(text) : undefined) as T;
    return { ok: true, body, replayed: response.headers.get("idempotency-replayed") === "true", ...(eventId === null ? {} : { eventId: Number(eventId) }) };
  };
  const open: OpenV1Stream = async (path, query) => {
    const response = await fetchV1("GET", path, { query });
    // A stream refused for want of a place says when to try again (Retry-After), which an HTTP answer passes on.
    const retryAfter = response.headers.get("retry-after");
    if (!response.ok || !response.body) return { ok: false, problem: await response.text(), ...(retryAfter ? { retryAfter } : {}) };
    return { ok: true, body: response.body, replayed: false };
  };
  // The gate admitted the token once, for the whole request; a wait that outlives a revocation asks again before it answers.
  const stillAdmitted = async (): Promise<V1Answer<null>> => {
    if (await c.env.TOKEN_GATE.getByName(caller.gateName).isValid(caller.gateName)) return { ok: true, body: null, replayed: false };
    const revoked = unauthorized("api", "The API token was revoked or has expired.");
    return { ok: false, problem: await problemResponse(revoked, c.get("requestId")).text() };
  };
  return { call, open, stillAdmitted };
}
