import { describe, expect } from "vitest";
import { call, chatsPath, expectProblem, newToken } from "../helpers";
import { it } from "../fixtures/chat";

describe("the per-token rate limit on the chat endpoints", () => {
  it("sends rate-limit headers and refuses the 61st request with Retry-After", async ({ w }) => {
    const first = await call("GET", chatsPath(w), { token: w.token });
    expect(first.headers.get("ratelimit-policy")).toBe('"per-token";q=60;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"per-token";r=59;t=\d+$/);
    const notFound = await call("GET", `${chatsPath(w)}/${crypto.randomUUID()}`, { token: w.token });
    expectProblem(notFound, 404, "not_found");
    expect(notFound.headers.get("ratelimit")).toMatch(/r=58/); // counted whatever the outcome
    for (let i = 0; i < 58; i++) await call("GET", chatsPath(w), { token: w.token });
    const over = await call("GET", chatsPath(w), { token: w.token });
    expectProblem(over, 429, "rate_limited");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect((await call("GET", chatsPath(w), { token: await newToken(w.session) })).status).toBe(200);
  });

  it("lets exactly 60 of 90 parallel requests through", async ({ w }) => {
    const results = await Promise.all(Array.from({ length: 90 }, () => call("GET", chatsPath(w), { token: w.token })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(60);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    for (const r of refused) expectProblem(r, 429, "rate_limited");
  });

  it("counts the request before checking its scope: 429 beats 403", async ({ w }) => {
    const readOnly = await newToken(w.session, ["chat:read"]);
    for (let i = 0; i < 60; i++) expect((await call("GET", chatsPath(w), { token: readOnly })).status).toBe(200);
    expectProblem(await call("POST", chatsPath(w), { token: readOnly, body: { title: "x" } }), 429, "rate_limited");
  });
});
