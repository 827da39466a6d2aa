import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { answerOf, call, env, expectProblem } from "../helpers";
import { ORIGIN } from "./browser";
import { MCP_RESOURCE } from "./flow";

const METADATA_URL = `${ORIGIN}/.well-known/oauth-protected-resource/mcp`;

describe("OAuth discovery", () => {
  it("describes /mcp as a protected resource (RFC 9728) at its own path and the bare one, publicly and cacheably", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const r = await call("GET", path, { headers: { origin: "https://somewhere.example" } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({
        resource: MCP_RESOURCE,
        authorization_servers: [ORIGIN],
        scopes_supported: ["chat:read", "chat:write"],
        bearer_methods_supported: ["header"],
      });
      expect(r.headers.get("cache-control")).toMatch(/max-age=\d+/);
      expect(r.headers.get("cache-control")).not.toContain("no-store");
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  it("describes the authorization server (RFC 8414): endpoints, code with S256 only, public clients, metadata documents", async () => {
    const r = await call("GET", "/.well-known/oauth-authorization-server");
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      scopes_supported: ["chat:read", "chat:write"],
    });
    expect(r.json.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(r.json.token_endpoint_auth_methods_supported).toContain("none");
    expect(r.headers.get("cache-control")).toMatch(/max-age=\d+/);
  });

  it("answers a browser's preflight for the metadata from any origin, without credentials", async () => {
    const r = await call("OPTIONS", "/.well-known/oauth-authorization-server", { headers: { origin: "https://inspector.example", "access-control-request-method": "GET" } });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("refuses other methods on the metadata with 405 and Allow", async () => {
    const r = await call("POST", "/.well-known/oauth-authorization-server", { body: {} });
    expectProblem(r, 405, "method_not_allowed");
    expect(r.headers.get("allow")).toContain("GET");
  });

  it("points /mcp's 401 at the resource metadata, with or without a credential, as problem+json", async () => {
    for (const authorization of [undefined, "Bearer nonsense", "Bearer u:g:secret", "Bearer pct_notatoken"]) {
      const r = await call("POST", "/mcp", {
        headers: { accept: "application/json, text/event-stream", ...(authorization ? { authorization } : {}) },
        body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      });
      expectProblem(r, 401, "unauthorized");
      expect(r.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(r.headers.get("www-authenticate")).toContain(`resource_metadata="${METADATA_URL}"`);
    }
  });

  it("answers a GET (or DELETE) of /mcp without a valid credential with the same 401, so a client probing with GET finds OAuth", async () => {
    for (const method of ["GET", "DELETE"]) {
      for (const authorization of [undefined, "Bearer nonsense"]) {
        const r = await call(method, "/mcp", { headers: { accept: "text/event-stream", ...(authorization ? { authorization } : {}) } });
        expectProblem(r, 401, "unauthorized");
        expect(r.headers.get("www-authenticate")).toContain(`resource_metadata="${METADATA_URL}"`);
        expect(r.headers.get("allow")).toBeNull();
      }
    }
  });

  it("is not there without PUBLIC_URL: every OAuth endpoint is 404 and /mcp's 401 names no metadata", async () => {
    const app = createApp();
    const without = { ...env, PUBLIC_URL: undefined };
    const fetchWithout = async (method: string, path: string) =>
      answerOf(
        await app.fetch(
          new Request(`${ORIGIN}${path}`, {
            method,
            headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
            body: method === "POST" ? "{}" : undefined,
          }),
          without,
          createExecutionContext(),
        ),
      );
    for (const [method, path] of [
      ["GET", "/.well-known/oauth-authorization-server"],
      ["GET", "/.well-known/oauth-protected-resource/mcp"],
      ["GET", "/.well-known/oauth-protected-resource"],
      ["GET", "/oauth/authorize?client_id=x"],
      ["POST", "/oauth/token"],
      ["POST", "/oauth/register"],
      ["DELETE", "/oauth/token"],
    ]) {
      expectProblem(await fetchWithout(method!, path!), 404, "not_found");
    }
    const unauthorized = await fetchWithout("POST", "/mcp");
    expectProblem(unauthorized, 401, "unauthorized");
    expect(unauthorized.headers.get("www-authenticate")).not.toContain("resource_metadata");
  });
});
