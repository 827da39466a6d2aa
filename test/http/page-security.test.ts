import { describe, expect, it } from "vitest";
import { call } from "../helpers";
import { cspOf, expectPageSecurity } from "./page-security";

const html = { accept: "text/html" };

describe("the security headers of the front door and the API reference", () => {
  it("sends the front door with its own policy: one inline style by nonce, no scripts, no forms", async () => {
    const page = await call("GET", "/", { headers: html });
    expect(page.status).toBe(200);
    const csp = expectPageSecurity(page);
    expect(csp.has("script-src")).toBe(false);
    expect(csp.get("form-action")).toBe("'none'");
    expect(csp.get("style-src")).toMatch(/^'nonce-[^']+'$/);
  });

  it("lets the API reference run its pinned bundle and its one inline call by nonce, and talk only to this origin", async () => {
    const page = await call("GET", "/v1/docs", { headers: html });
    expect(page.status).toBe(200);
    const csp = expectPageSecurity(page);
    expect(csp.get("script-src")).toMatch(/^'self' 'nonce-[^']+'$/);
    expect(csp.get("connect-src")).toBe("'self'");
    expect(csp.get("script-src")).not.toContain("unsafe");
  });

  it("makes a fresh nonce for every response", async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 3; i++) nonces.add(cspOf((await call("GET", "/v1/docs")).headers).get("script-src")!);
    expect(nonces.size).toBe(3);
  });

  it("leaves JSON answers alone: the OpenAPI document has no page policy", async () => {
    const r = await call("GET", "/v1/openapi.json");
    expect(r.headers.get("content-security-policy")).toBeNull();
  });
});
