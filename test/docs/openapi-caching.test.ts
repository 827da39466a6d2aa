import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { ADMIN, call, env } from "../helpers";

type Operation = { operationId: string; security: unknown[]; parameters: { name: string; in: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> };
const operationOf = (doc: { paths: Record<string, { get?: Operation }> }, path: string) => doc.paths[path]!.get!;

const DOCUMENTS = [
  { path: "/v1/openapi.json", token: undefined, cacheControl: "public, max-age=300", operationId: "getOpenApiDocument" },
  { path: "/admin/openapi.json", token: ADMIN, cacheControl: "private, max-age=300", operationId: "getOperatorOpenApiDocument" },
];

describe("the OpenAPI documents' caching", () => {
  for (const { path, token, cacheControl, operationId } of DOCUMENTS) {
    it(`${path} answers with ${cacheControl} and a strong ETag; If-None-Match with it gets 304 and no body`, async () => {
      const first = await call("GET", path, { token });
      expect(first.status).toBe(200);
      expect(first.headers.get("cache-control")).toBe(cacheControl);
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect((await call("GET", path, { token })).headers.get("etag")).toBe(etag);
      const again = await call("GET", path, { token, headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("cache-control")).toBe(cacheControl);
      expect(again.headers.get("x-request-id")).toBeTruthy();
      // A list and the weak form match too (RFC 9110's weak comparison); another tag gets the document.
      expect((await call("GET", path, { token, headers: { "if-none-match": `"other", W/${etag}` } })).status).toBe(304);
      expect((await call("HEAD", path, { token, headers: { "if-none-match": etag } })).status).toBe(304);
      const other = await call("GET", path, { token, headers: { "if-none-match": '"0000"' } });
      expect(other.status).toBe(200);
      expect(other.text).toBe(first.text);
    });

    it(`${path} declares its ETag, Cache-Control and 304 in its own document`, async () => {
      const doc = (await call("GET", path, { token })).json;
      const operation = operationOf(doc, path);
      expect(operation.operationId).toBe(operationId);
      expect(operation.parameters).toContainEqual(expect.objectContaining({ name: "If-None-Match", in: "header" }));
      for (const status of ["200", "304"])
        expect(Object.keys(operation.responses[status]!.headers ?? {})).toEqual(expect.arrayContaining(["ETag", "Cache-Control", "x-request-id"]));
      expect(doc.components.headers["Cache-Control"].description).toContain(`\`${cacheControl}\``);
      if (token) expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["401", "404"]));
      else expect(operation.security).toEqual([]);
    });
  }

  it("gives the operator document's 304 only to ADMIN_TOKEN: without it, 401 whatever the If-None-Match", async () => {
    const etag = (await call("GET", "/admin/openapi.json", { token: ADMIN })).headers.get("etag")!;
    const refused = await call("GET", "/admin/openapi.json", { headers: { "if-none-match": etag } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("etag")).toBeNull();
  });

  it("gives each document its own ETag, made once per isolate", async () => {
    const app = createApp();
    const ctx = createExecutionContext();
    const get = (path: string) => app.fetch(new Request(`https://service.test${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }), env, ctx);
    const digest = vi.spyOn(crypto.subtle, "digest");
    const publicTag = (await get("/v1/openapi.json")).headers.get("etag");
    const hashedOnce = digest.mock.calls.length;
    expect(hashedOnce).toBeGreaterThan(0);
    expect((await get("/v1/openapi.json")).headers.get("etag")).toBe(publicTag);
    expect(digest.mock.calls.length).toBe(hashedOnce);
    const operatorTag = (await get("/admin/openapi.json")).headers.get("etag");
    expect(operatorTag).not.toBe(publicTag);
  });
});
