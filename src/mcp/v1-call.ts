import type { Context } from "hono";
import { bindingsAdmitting, type GatedEnv } from "../auth/gate";
import type { Env } from "../env";
import { invalidRequest } from "../http/problem";

/** The Worker's own fetch: a tool's call goes through the very route a /v1 client calls. */
export type AppFetch = (request: Request, env: Env, ctx: Context["executionCtx"]) => Response | Promise<Response>;

/** A /v1 answer: the JSON of a success, or the problem+json text of a failure, as it was sent. */
export type V1Answer<T = unknown> = { ok: true; body: T; replayed: boolean } | { ok: false; problem: string };

export type V1Request = { query?: Record<string, string | undefined>; body?: unknown; headers?: Record<string, string> };
export type CallV1 = <T = unknown>(method: string, path: string, request?: V1Request) => Promise<V1Answer<T>>;

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
export function v1Caller(c: Context<GatedEnv>, appFetch: AppFetch): CallV1 {
  const env = bindingsAdmitting(c.env, c.get("caller"));
  return async <T>(method: string, path: string, request: V1Request = {}): Promise<V1Answer<T>> => {
    const url = new URL(path, c.req.url);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers = new Headers({ ...request.headers, "x-request-id": c.get("requestId") });
    if (request.body !== undefined) headers.set("content-type", "application/json");
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const response = await appFetch(new Request(url, { method, headers, body }), env, c.executionCtx);
    const text = await response.text();
    if (!response.ok) return { ok: false, problem: text };
    return { ok: true, body: (text ? JSON.parse(text) : undefined) as T, replayed: response.headers.get("idempotency-replayed") === "true" };
  };
}
