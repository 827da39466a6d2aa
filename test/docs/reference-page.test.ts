import { describe, expect, it } from "vitest";
import { REFERENCE_SCRIPT_PATH } from "../../src/docs/routes";
import { call } from "../helpers";

describe("the API reference page", () => {
  it("loads the reference script from this Worker, not a CDN, and links the JSON for readers without scripts", async () => {
    const page = await call("GET", "/v1/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain(`<script src="${REFERENCE_SCRIPT_PATH}">`);
    expect(page.text).toContain('<a href="/v1/openapi.json">');
    expect(page.text).toContain("<noscript>");
    expect(page.text).not.toMatch(/src="https?:/);
    expect(page.text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
  });

  it("is set up for API users: the token's field open from the start, no developer toolbar", async () => {
    const page = await call("GET", "/v1/docs");
    const config = JSON.parse(page.text.match(/Scalar\.createApiReference\("#app", (\{.*?\})\);/)![1]!);
    expect(config).toMatchObject({ authentication: { preferredSecurityScheme: "userApiTokenBearer" }, showDeveloperTools: "never" });
    const document = (await call("GET", "/v1/openapi.json")).json;
    expect(Object.keys(document.components.securitySchemes)).toContain("userApiTokenBearer");
  });

  it("serves the pinned bundle with a year-long cache", async () => {
    const r = await call("GET", REFERENCE_SCRIPT_PATH);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("javascript");
    expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(r.text).toContain("createApiReference");
  });
});
