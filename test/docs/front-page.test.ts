import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { answerOf, call, env } from "../helpers";

const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** The page as a Worker with these vars serves it (npm run dev sets DEV_SERVER_ID and PUBLIC_URL). */
async function pageWith(vars: Partial<Env>) {
  const ctx = createExecutionContext();
  const response = await createApp().fetch(new Request("http://127.0.0.1:8787/", { headers: { accept: BROWSER } }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return (await answerOf(response)).text;
}

/** The commands of the page's code blocks, as a shell gets them when they are copied. */
const codeBlocks = (html: string) =>
  [...html.matchAll(/<pre>([\s\S]*?)<\/pre>/g)].map((m) => m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&amp;", "&"));

describe("the front door at /", () => {
  it("is a page that says what the service is, links the reference and the OpenAPI JSON, and shows the quickstart and version", async () => {
    const page = await call("GET", "/", { headers: { accept: BROWSER } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("vary")).toMatch(/accept/i);
    expect(page.text).toContain("<h1>Project Chat API</h1>");
    expect(page.text).toContain('<a href="/v1/docs">');
    expect(page.text).toContain('<a href="/v1/openapi.json">');
    expect(page.text).toContain('<a href="/account">Your account</a>: sign in to get an API token');
    for (const step of ["Get a token.", "Send.", "Follow."]) expect(page.text).toContain(`<strong>${step}</strong>`);
    expect(page.text).toContain(`Version ${packageJson.version}`);
    expect(page.text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    // Nothing from elsewhere: no scripts, fonts or images.
    expect(page.text).not.toMatch(/<script|src=|https?:\/\/(?!this-service\.example)/);
  });

  it("has a quickstart that works on any machine and any day: node makes the key and the expiry, the stream starts at the first event", async () => {
    for (const page of [(await call("GET", "/", { headers: { accept: BROWSER } })).text, await pageWith({ DEV_SERVER_ID: "run", PUBLIC_URL: "http://127.0.0.1:8787" })]) {
      const commands = codeBlocks(page).join("\n");
      expect(commands).not.toContain("uuidgen");
      expect(commands).toContain(`-H "idempotency-key: $(node -e 'console.log(crypto.randomUUID())')"`);
      expect(commands).toContain("EXPIRES=$(node -e 'console.log(new Date(Date.now() + 30 * 86400000).toISOString())')");
      expect(commands, "no fixed date, which some day is in the past").not.toMatch(/\b20\d\d-\d\d-\d\d/);
      expect(commands).toContain("/events?after=0");
      expect(commands, "a failed step stops with the problem, not TOKEN=null").not.toMatch(/jq -r /);
      expect(page, "long commands wrap rather than overflow their box").toMatch(/pre \{[^}]*white-space: pre-wrap/);
    }
  });

  it("signs in as your account on a deployment, at PUBLIC_URL", async () => {
    const page = await pageWith({ PUBLIC_URL: "https://chat.example.com/ignored-path" });
    const [token] = codeBlocks(page);
    expect(token).toMatch(/^BASE=https:\/\/chat\.example\.com\n/);
    expect(token).toContain(`-d '{"email":"you@example.com","password":"your password"}'`);
    expect(page).not.toContain("npm run token");
  });

  it("uses the demo data under npm run dev, as the README's quickstart does", async () => {
    const page = await pageWith({ DEV_SERVER_ID: "run", PUBLIC_URL: "http://127.0.0.1:8799" });
    const [local, byHand] = codeBlocks(page);
    expect(local).toBe(`eval "$(npm run -s token -- --shell)"`);
    expect(byHand).toMatch(/^BASE=http:\/\/127\.0\.0\.1:8799\n/);
    expect(byHand).toContain(`-d '{"email":"demo@example.com","password":"demo-password"}'`);
    expect(page).not.toContain("your-project-id");
  });

  it("serves its icon, which the browser also finds at /favicon.ico", async () => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const r = await call("GET", path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("image/svg+xml");
      expect(r.text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
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
