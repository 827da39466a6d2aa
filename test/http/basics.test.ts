import { describe, expect, it } from "vitest";
import { HTTPException } from "hono/http-exception";
import { toApiError } from "../../src/http/problem";
import { call, expectProblem } from "../helpers";

describe("HTTP basics", () => {
  it("answers an unknown path with a problem 404", async () => {
    expectProblem(await call("GET", "/v1/nothing-here"), 404, "not_found");
    expectProblem(await call("GET", "/nothing-here"), 404, "not_found");
  });

  it("answers a trailing-slash variant of a known path with 404, whatever the method", async () => {
    for (const [method, path] of [
      ["GET", "/v1/plans/"],
      ["HEAD", "/v1/poll/"],
      ["POST", "/v1/plans/"],
      ["GET", "/v1/chat-banners/page-top/"],
      ["GET", "/v1/openapi.json/"],
    ] as const) {
      const r = await call(method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      if (method !== "HEAD") expectProblem(r, 404, "not_found");
    }
  });

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const r = await call("DELETE", "/v1/plans");
    expectProblem(r, 405, "method_not_allowed");
    expect(r.headers.get("allow")).toContain("GET");
  });

  it("puts a request id on every response, keeping a sane one from the caller", async () => {
    const generated = await call("GET", "/v1/nothing-here");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await call("GET", "/v1/openapi.json", { headers: { "x-request-id": "trace-1234abcd" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-1234abcd");
    const replaced = await call("GET", "/v1/openapi.json", { headers: { "x-request-id": "bad id with spaces" } });
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });

  it("refuses bodies over the size limit with 413 before reading them", async () => {
    expectProblem(
      await call("PUT", "/admin/catalog", { token: "test-admin-token", raw: "x".repeat(17 * 1024 * 1024), headers: { "content-type": "application/json" } }),
      413,
      "payload_too_large",
    );
  });

  it("serves the OpenAPI 3.1 document, covering every endpoint and the bearer scheme, and its reference page", async () => {
    const doc = (await call("GET", "/v1/openapi.json")).json;
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.info).toMatchObject({ version: "12.0.1", title: expect.stringContaining("v1") });
    for (const path of ["/v1/plans", "/v1/privacy-policy", "/v1/terms-of-use", "/v1/chat-banners", "/v1/chat-banners/page-top", "/v1/poll"]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    for (const path of ["/auth/token", "/auth/api-tokens", "/auth/api-tokens/{tokenId}"]) expect(doc.paths[path], path).toBeDefined();
    const chatPaths: Record<string, string[]> = {
      "/v1/projects/{projectId}/chats": ["get", "post"],
      "/v1/projects/{projectId}/chats/{chatId}": ["get", "patch"],
      "/v1/projects/{projectId}/chats/{chatId}/archive": ["post"],
      "/v1/projects/{projectId}/chats/{chatId}/restore": ["post"],
      "/v1/projects/{projectId}/chats/{chatId}/messages": ["get", "post"],
      "/v1/projects/{projectId}/chats/{chatId}/queue": ["get"],
    };
    for (const [path, methods] of Object.entries(chatPaths)) {
      for (const method of methods) {
        expect(doc.paths[path]?.[method]?.security, `${method} ${path}`).toEqual([{ userApiTokenBearer: [] }]);
      }
    }
    expect(doc.components.securitySchemes.userApiTokenBearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/v1/projects/{projectId}/chats/{chatId}/messages"].post.parameters.map((p: { name: string }) => p.name)).toContain("idempotency-key");
    const page = await call("GET", "/v1/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("/v1/openapi.json");
  });
});

describe("toApiError", () => {
  it("hides internals of unexpected errors behind a 500 problem", () => {
    const problem = toApiError(new Error("D1_ERROR: secret table layout"));
    expect(problem.status).toBe(500);
    expect(problem.code).toBe("internal_error");
    expect(problem.message).not.toContain("D1_ERROR");
  });

  it("turns an unsupported media type into a 400 invalid_request", () => {
    expect(toApiError(new HTTPException(415)).status).toBe(400);
  });
});
