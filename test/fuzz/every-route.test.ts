import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { carryingBody, viaApp } from "../http/method-and-body";
import { catalogFixture } from "../fixtures/catalog";
import { ADMIN, admin, call, newChat, world, type World } from "../helpers";

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

let w: World;
let chatId: string;
let templates: string[];

beforeAll(async () => {
  // A loaded catalog, as in service: without one, GET /v1/plans rightly answers 503 (not loaded yet), which is no bad-input error.
  expect((await admin("PUT", "/admin/catalog", catalogFixture())).status).toBe(204);
  w = await world();
  chatId = (await newChat(w, "every route")).id;
  const publicDoc = (await call("GET", "/v1/openapi.json")).json as { paths: Record<string, unknown> };
  const operatorDoc = (await admin("GET", "/admin/openapi.json")).json as { paths: Record<string, unknown> };
  templates = [...Object.keys(publicDoc.paths), ...Object.keys(operatorDoc.paths)];
});

/** A path of the document with its parameters filled: this caller's project and chat, or values that name nothing. */
const pathOf = (template: string, known: boolean, other: string) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!known) return encodeURIComponent(other);
    if (name === "projectId") return w.projectId;
    if (name === "chatId") return chatId;
    return crypto.randomUUID();
  });

const credentials = () => [undefined, w.token, w.session, ADMIN];
const bodies = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom("{}", "[]", "null", '{"content":"hi"}', '{"title":"t"}', "{"),
);

/** One request, its body never read past its headers when it is a stream that would not end. */
async function send(method: string, path: string, body: string, contentType: string, token: string | undefined) {
  const headers: Record<string, string> = { "content-type": contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const url = `https://service.test${path}`;
  if (method === "GET" || method === "HEAD") return viaApp(carryingBody(method, url, body, headers));
  const response = await exports.default.fetch(new Request(url, { method, headers, body }));
  await response.body?.cancel();
  return { status: response.status, headers: response.headers, text: "", json: undefined };
}

describe("every route of the OpenAPI documents, with every method and a body", () => {
  it("never answers 5xx, and refuses a body on GET or HEAD", async () => {
    expect(templates.length).toBeGreaterThan(25);
    for (const template of templates) {
      for (const method of METHODS) {
        const r = await send(method, pathOf(template, true, ""), '{"x":1}', "application/json", w.token);
        expect(r.status, `${method} ${template}`).toBeLessThan(500);
        if (method === "GET" || method === "HEAD") expect([400, 405], `${method} ${template}`).toContain(r.status);
      }
    }
  });

  it("never answers 5xx for any body, content type, credential or parameter", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom(...METHODS),
        bodies,
        fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"),
        fc.nat({ max: 3 }),
        fc.boolean(),
        fc.string({ minLength: 1, maxLength: 40 }),
        async (t, method, body, contentType, who, known, other) => {
          const template = templates[t % templates.length]!;
          const path = pathOf(template, known, other);
          const r = await send(method, path, body, contentType, credentials()[who]);
          expect(r.status, `${method} ${path} ${body.slice(0, 60)}`).toBeLessThan(500);
          // A body the fuzzer happened to make valid for the maintenance switch must not leave the service in maintenance.
          if (template === "/admin/maintenance" && r.status < 300) await admin("PUT", "/admin/maintenance", { enabled: false });
        },
      ),
      { numRuns: 400 },
    );
  });
});
