import { describe, expect } from "vitest";
import { ADMIN, call, chatsPath, expectProblem } from "../helpers";
import { carryingBody, viaApp } from "./method-and-body";
import { it } from "../fixtures/chat";

const JSON_HEADERS = { "content-type": "application/json" };
const url = (path: string) => `https://service.test${path}`;

describe("a GET or HEAD that carries a body", () => {
  it("is refused with 400 on every router, before credentials, never a 500", async ({ w, chat }) => {
    const chatId = chat.id;
    const cases: { router: string; path: string; token?: string }[] = [
      { router: "/v1 catalog", path: "/v1/plans" },
      { router: "/v1/projects", path: `${chatsPath(w)}/${chatId}/messages`, token: w.token },
      { router: "/v1/projects without a token", path: chatsPath(w) },
      { router: "/auth", path: "/auth/api-tokens", token: w.session },
      { router: "/admin", path: "/admin/catalog", token: ADMIN },
      { router: "/agent", path: `/agent/chats/${chatId}/tasks/${crypto.randomUUID()}/steering` },
      { router: "docs", path: "/v1/openapi.json" },
    ];
    for (const { router, path, token } of cases) {
      for (const method of ["GET", "HEAD"]) {
        const headers: Record<string, string> = { ...JSON_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) };
        const r = await viaApp(carryingBody(method, url(path), '{"filter":"x"}', headers));
        expect(r.status, `${method} ${router}`).toBe(400);
        expect(r.headers.get("content-type"), router).toContain("application/problem+json");
        if (method === "GET") expect(r.json, router).toMatchObject({ code: "invalid_request", status: 400, errors: [{ path: "(body)" }] });
      }
    }
  });

  it("is answered as usual when the body is empty, whatever its Content-Type says", async ({ w }) => {
    const r = await viaApp(carryingBody("GET", url(chatsPath(w)), "", { ...JSON_HEADERS, authorization: `Bearer ${w.token}` }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.items).toEqual([]);
    expect((await viaApp(carryingBody("GET", url("/v1/openapi.json"), "", JSON_HEADERS))).status).toBe(200);
  });
});

describe("a wrong method on a known path", () => {
  it("is 405 with Allow before any credential is checked", async ({ w, chat }) => {
    const paths = [
      "/auth/api-tokens",
      `/auth/api-tokens/${crypto.randomUUID()}`,
      chatsPath(w),
      `${chatsPath(w)}/${chat.id}`,
      "/admin/accounts",
      `/agent/chats/${chat.id}/tasks/${crypto.randomUUID()}/result`,
    ];
    for (const path of paths) {
      const r = await call("PUT", path, { body: {} });
      expectProblem(r, 405, "method_not_allowed");
      expect(r.headers.get("allow"), path).toBeTruthy();
      expect(r.json.detail, path).toMatch(/^PUT is not allowed here\. Use [A-Z, ]+\.$/);
    }
  });

  it("keeps /admin hidden (404) while ADMIN_TOKEN is unset", async () => {
    expectProblem(await viaApp(new Request(url("/admin/catalog"), { method: "DELETE" }), { ADMIN_TOKEN: "" }), 404, "not_found");
  });
});
