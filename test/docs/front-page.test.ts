import { describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { call } from "../helpers";

describe("the front door at /", () => {
  it("is a page that says what the service is, links the reference and the OpenAPI JSON, and shows the quickstart and version", async () => {
    const page = await call("GET", "/", { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("vary")).toMatch(/accept/i);
    expect(page.text).toContain("<h1>Project Chat API</h1>");
    expect(page.text).toContain('<a href="/v1/docs">');
    expect(page.text).toContain('<a href="/v1/openapi.json">');
    expect(page.text).toContain('<a href="/account">Your account</a>: sign in to get an API token');
    for (const step of ["Get a token.", "Send.", "Follow."]) expect(page.text).toContain(`<strong>${step}</strong>`);
    expect(page.text).toContain("npm run token");
    expect(page.text).toContain(`Version ${packageJson.version}`);
    // Nothing from elsewhere: no scripts, fonts or images.
    expect(page.text).not.toMatch(/<script|src=|https?:\/\/(?!this-service\.example)/);
  });

  it("is the page for a client that accepts anything", async () => {
    const page = await call("GET", "/", { headers: { accept: "*/*" } });
    expect(page.headers.get("content-type")).toContain("text/html");
  });

  it("answers JSON to Accept: application/json", async () => {
    const r = await call("GET", "/", { headers: { accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.json).toEqual({
      name: "Project Chat API",
      description: expect.stringContaining("agent"),
      version: packageJson.version,
      reference: "/v1/docs",
      openapi: "/v1/openapi.json",
    });
  });

  it("answers HEAD with the page's headers and no body", async () => {
    const r = await call("HEAD", "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toBe("");
  });

  it("refuses other methods with 405 and Allow", async () => {
    const r = await call("POST", "/", { body: {} });
    expect(r.status).toBe(405);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    expect(r.json.code).toBe("method_not_allowed");
    expect(r.headers.get("allow")).toContain("GET");
  });
});
