import { describe, expect, it } from "vitest";
import { call, expectProblem, world } from "../helpers";
import { initialize, post } from "./mcp-helpers";

const APP = "http://localhost:5173";
const preflight = (origin: string) =>
  call("OPTIONS", "/mcp", { headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });

describe("a browser client of /mcp", () => {
  it("gets 204 to its preflight from an APP_ORIGINS origin, with what it may send", async () => {
    const r = await preflight(APP);
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe(APP);
    expect(r.headers.get("access-control-allow-methods")).toBe("POST");
    expect(r.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(r.headers.get("access-control-allow-headers")).toContain("mcp-protocol-version");
  });

  it("gets 403 to its preflight from any other origin, as every other method does", async () => {
    const r = await preflight("https://evil.example");
    expectProblem(r, 403, "forbidden");
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("may read the answers and the 401's challenge from an APP_ORIGINS origin", async () => {
    const w = await world();
    const answered = await post(initialize(), { origin: APP }, w.token);
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe(APP);
    const refused = await post(initialize(), { origin: APP });
    expectProblem(refused, 401, "unauthorized");
    expect(refused.headers.get("access-control-allow-origin")).toBe(APP);
    expect(refused.headers.get("access-control-expose-headers")).toContain("www-authenticate");
  });

  it("answers a client that sends no Origin (not a browser) without CORS headers, but with Vary: Origin", async () => {
    const w = await world();
    const answered = await post(initialize(), {}, w.token);
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBeNull();
    expect(answered.headers.get("access-control-expose-headers")).toBeNull();
    expect(answered.headers.get("vary")).toContain("Origin");
    const refused = await post(initialize(), {});
    expectProblem(refused, 401, "unauthorized");
    expect(refused.headers.get("vary")).toContain("Origin");
    // An OPTIONS without an Origin is answered as a preflight still: what may be sent, and no origin allowed.
    const options = await call("OPTIONS", "/mcp");
    expect(options.status).toBe(204);
    expect(options.headers.get("access-control-allow-methods")).toBe("POST");
    expect(options.headers.get("access-control-allow-origin")).toBeNull();
  });
});
