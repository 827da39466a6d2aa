import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";

export const ADMIN = "test-admin-token";

type CallOptions = { headers?: Record<string, string>; body?: unknown; raw?: BodyInit; token?: string };

/** Calls the Worker's own fetch handler, as a client would over HTTP. */
export async function call(method: string, path: string, options: CallOptions = {}) {
  const headers = new Headers(options.headers);
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  let body: BodyInit | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const response = await exports.default.fetch(new Request(`https://service.test${path}`, { method, headers, body }));
  const text = await response.text();
  let json: any;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: response.status, headers: response.headers, text, json };
}

export const admin = (method: string, path: string, body?: unknown) => call(method, path, { token: ADMIN, body });

export function expectProblem(r: Awaited<ReturnType<typeof call>>, status: number, code?: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get("content-type")).toContain("application/problem+json");
  expect(r.json).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), code: expect.any(String), type: expect.any(String) });
  if (code) expect(r.json.code).toBe(code);
}

export { env };
