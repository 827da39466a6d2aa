import { createExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { Question } from "../../src/chats/question-schemas";
import { PROBLEM_CODES } from "../../src/http/problem";
import { ADMIN, call, env } from "../helpers";

type Operation = {
  operationId?: string;
  parameters?: any[];
  security?: unknown[];
  requestBody?: unknown;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: { $ref?: string } }>; headers?: Record<string, unknown> }>;
};
type Doc = { paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, any>>; servers?: unknown[] };
const METHODS = ["get", "put", "post", "patch", "delete"];

const operationsOf = (doc: Doc) => Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method]! })));
const resolve = (doc: Doc, response: Operation["responses"][string]) => (response.$ref ? doc.components.responses![response.$ref.split("/").pop()!] : response);

describe("the public OpenAPI document", () => {
  it("gives the try-it examples that work against local development's demo data, and no pre-set archived=true", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    const projectIds = operationsOf(doc).flatMap(({ op }) => (op.parameters ?? []).filter((p) => p.name === "projectId"));
    expect(projectIds.length).toBeGreaterThan(10);
    for (const p of projectIds) expect(p.schema.example).toBe("00000000-0000-4000-8000-000000000001");
    expect(doc.components.schemas!.SignInRequest.example).toEqual({ email: "demo@example.com", password: "demo-password" });
    const archived = doc.paths["/v1/projects/{projectId}/chats"]!.get!.parameters!.find((p) => p.name === "archived");
    expect(archived.required).toBe(false);
    expect(archived.schema.default).toBe("false");
    expect((doc as { info?: { description?: string } }).info?.description).toMatch(/Getting a token.*POST \/auth\/token.*POST \/auth\/api-tokens.*npm run token/s);
  });

  it("gives every operation a unique operationId, servers and an explicit security requirement", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
    const ops = operationsOf(doc);
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        "listChats",
        "createChat",
        "getChat",
        "renameChat",
        "archiveChat",
        "restoreChat",
        "listMessages",
        "getMessage",
        "sendMessage",
        "getQueue",
        "getSubmission",
        "stopMessage",
        "cancelSubmission",
        "steerChat",
        "createApiToken",
        "listApiTokens",
        "revokeApiToken",
        "signIn",
        "getPlans",
      ]),
    );
    for (const { path, method, op } of ops) expect(op.security, `${method} ${path}`).toBeDefined();
    expect(doc.paths["/auth/token"]!.post!.security).toEqual([]);
    expect(doc.paths["/v1/plans"]!.get!.security).toEqual([]);
  });

  it("declares the question operations, the answer body as a oneOf of named shapes with examples, and the Question nowhere nullable but where it may be null", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    const question = "/v1/projects/{projectId}/chats/{chatId}/questions/{questionId}";
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).sort();
    const common = ["401", "403", "404", "405", "429", "500", "503"];
    expect(statuses(question, "get")).toEqual(["200", ...common].sort());
    expect(statuses(`${question}/answer`, "post")).toEqual(["202", "400", "409", "413", ...common].sort());
    const answer = doc.paths[`${question}/answer`]!.post! as Operation & { requestBody: { content: { "application/json": { schema: { $ref: string }; examples: object } } } };
    expect(answer.operationId).toBe("answerQuestion");
    expect(answer.parameters!.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["idempotency-key", "questionId"]));
    const body = answer.requestBody.content["application/json"];
    expect(body.schema).toEqual({ $ref: "#/components/schemas/Answer" });
    expect(Object.keys(body.examples)).toEqual(expect.arrayContaining(["pick", "text", "approve", "deny", "connected", "decline"]));
    const schemas = doc.components.schemas!;
    expect(schemas.Answer.oneOf.map((s: { $ref: string }) => s.$ref.split("/").pop())).toEqual([
      "ChoiceAnswer",
      "TextAnswer",
      "ApprovalAnswer",
      "ConnectionAnswer",
      "DeclineAnswer",
    ]);
    for (const shape of ["ChoiceAnswer", "TextAnswer", "ApprovalAnswer", "ConnectionAnswer", "DeclineAnswer", "QuestionAction"]) {
      expect(schemas[shape].type, shape).toBe("object");
      if (shape !== "QuestionAction") expect(schemas[shape].additionalProperties, shape).toBe(false);
    }
    expect(schemas.Question.properties.answer.oneOf).toContainEqual({ type: "null" });
    expect(schemas.Question.properties.action.anyOf).toEqual([{ $ref: "#/components/schemas/QuestionAction" }, { type: "null" }]);
    expect(schemas.QuestionOption.properties.label.example).toBe("Red");
    expect(Question.parse(schemas.Question.example)).toMatchObject({ kind: "choice", status: "pending" });
    expect(resolve(doc, answer.responses["202"]!).content!["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/AnswerSubmission" });
    expect(schemas.Chat.required).toEqual(expect.arrayContaining(["pendingQuestionId", "isAwaitingUser"]));
    expect(schemas.Message.required).toContain("questionId");
    expect((doc as unknown as { webhooks: Record<string, unknown> }).webhooks).toHaveProperty("question.asked");
    expect((doc as unknown as { webhooks: Record<string, unknown> }).webhooks).toHaveProperty("question.closed");
    expect(schemas.Problem.properties.code.enum).toEqual(expect.arrayContaining(["question_not_found", "question_not_pending", "answer_does_not_fit"]));
  });

  it("declares the control operations with every status they answer", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    const chat = "/v1/projects/{projectId}/chats/{chatId}";
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).sort();
    const common = ["401", "403", "404", "405", "429", "500", "503"];
    expect(statuses(`${chat}/messages/{messageId}/stop`, "post")).toEqual(["200", "400", "413", ...common].sort());
    expect(doc.paths[`${chat}/messages/{messageId}/stop`]!.post!.requestBody).toMatchObject({ required: false });
    expect(statuses(`${chat}/queue/{submissionId}`, "delete")).toEqual(["204", "409", ...common].sort());
    expect(statuses(`${chat}/steer`, "post")).toEqual(["202", "400", "409", "413", ...common].sort());
    expect(statuses(`${chat}/submissions/{submissionId}`, "get")).toEqual(["200", "400", ...common].sort());
    expect(statuses(`${chat}/messages/{messageId}`, "get")).toEqual(["200", ...common].sort());
    expect(Object.keys(resolve(doc, doc.paths[`${chat}/steer`]!.post!.responses["202"]!).headers ?? {})).toContain("Idempotency-Replayed");
    expect(doc.components.schemas!.Message.required).toEqual(expect.arrayContaining(["submissionId", "taskId"]));
    expect(doc.components.schemas!.SubmissionState.properties.status.enum).toEqual(["queued", "steering", "dispatching", "running", "done", "failed", "cancelled"]);
  });

  it("never reflects the request's Host: the server is PUBLIC_URL or a relative /, and every Host gets the same document", async () => {
    const texts = new Set<string>();
    for (const host of ["service.test", "evil.example", "127.0.0.1:1", `${"x".repeat(200)}.example`]) {
      const r = await exports.default.fetch(new Request(`https://${host}/v1/openapi.json`, { headers: { host } }));
      const text = await r.text();
      expect(text).not.toContain(host);
      texts.add(text);
    }
    expect(texts.size).toBe(1);
    const withPublicUrl = await createApp().fetch(
      new Request("https://evil.example/v1/openapi.json"),
      { ...env, PUBLIC_URL: "https://api.example.com/" },
      createExecutionContext(),
    );
    const doc = (await withPublicUrl.json()) as Doc & { info: { license: { url: string } } };
    expect(doc.servers).toEqual([expect.objectContaining({ url: "https://api.example.com" })]);
    expect(doc.info.license.url).toBe("https://api.example.com/v1/terms-of-use");
  });

  it("leaves operator operations out", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/admin"))).toEqual([]);
    expect(doc.components.securitySchemes).not.toHaveProperty("adminBearer");
  });

  it("answers every error with the one Problem schema, whose code lists every stable code", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    expect(doc.components.schemas!.Problem.properties.code.enum).toEqual([...PROBLEM_CODES]);
    expect(doc.components.schemas!.Problem.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code", "instance"]));
    for (const { path, method, op } of operationsOf(doc)) {
      for (const [status, entry] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const response = resolve(doc, entry);
        expect(response.content?.["application/problem+json"]?.schema.$ref, `${method} ${path} ${status}`).toBe("#/components/schemas/Problem");
        expect(response.headers?.["x-request-id"], `${method} ${path} ${status}`).toBeDefined();
      }
      expect(op.responses, `${method} ${path}`).toHaveProperty("405");
      if (op.requestBody) expect(op.responses, `${method} ${path}`).toHaveProperty("413");
    }
  });

  it("declares the headers the service sends", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    const headerNames = (path: string, method: string, status: string) => Object.keys(resolve(doc, doc.paths[path]![method]!.responses[status]!).headers ?? {});
    for (const { path, method, op } of operationsOf(doc).filter((o) => o.path.startsWith("/v1/projects"))) {
      for (const status of Object.keys(op.responses).filter((s) => s !== "401")) {
        expect(headerNames(path, method, status), `${method} ${path} ${status}`).toEqual(expect.arrayContaining(["RateLimit", "RateLimit-Policy", "x-request-id"]));
      }
      expect(headerNames(path, method, "429")).toContain("Retry-After");
      expect(headerNames(path, method, "401")).toContain("WWW-Authenticate");
      expect(headerNames(path, method, "403")).toContain("WWW-Authenticate");
    }
    expect(headerNames("/v1/projects/{projectId}/chats/{chatId}/messages", "post", "202")).toContain("Idempotency-Replayed");
    expect(headerNames("/auth/token", "post", "200")).toContain("Set-Cookie");
    expect(headerNames("/auth/token", "post", "429")).toContain("Retry-After");
    for (const status of ["200", "304"]) expect(headerNames("/v1/plans", "get", status)).toEqual(expect.arrayContaining(["ETag", "Cache-Control", "Content-Language"]));
    expect(doc.paths["/v1/plans"]!.get!.responses).toHaveProperty("503");
    expect((doc.paths["/v1/plans"]!.get as unknown as { parameters: { name: string }[] }).parameters.map((p) => p.name)).toContain("If-None-Match");
  });
});

describe("the operator OpenAPI document", () => {
  it("is served behind ADMIN_TOKEN with only the /admin operations", async () => {
    const r = await call("GET", "/admin/openapi.json", { token: ADMIN });
    expect(r.status).toBe(200);
    const doc: Doc = r.json;
    const paths = Object.keys(doc.paths);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith("/admin/"))).toBe(true);
    expect(doc.paths["/admin/accounts"]!.get!.operationId).toBe("listAccounts");
  });

  it("answers 401 without the token and 404 when ADMIN_TOKEN is unset", async () => {
    const missing = await call("GET", "/admin/openapi.json");
    expect(missing.status).toBe(401);
    expect(missing.json.code).toBe("unauthorized");
    const unset = await createApp().fetch(new Request("https://s.test/admin/openapi.json"), { ...env, ADMIN_TOKEN: undefined }, createExecutionContext());
    expect(unset.status).toBe(404);
    expect(((await unset.json()) as { code: string }).code).toBe("not_found");
  });
});

describe("the event stream's frame in the document", () => {
  it("types data as JSON text and names, by contentSchema, a component that exists", async () => {
    const doc: Doc = (await call("GET", "/v1/openapi.json")).json;
    const frames = doc.components.schemas!.ChatEvent.oneOf as { properties: { event: { const?: string; enum?: string[] }; data: Record<string, any> } }[];
    expect(frames).toHaveLength(7);
    for (const frame of frames) {
      const { data } = frame.properties;
      expect(data).toMatchObject({ type: "string", contentMediaType: "application/json", contentSchema: { $ref: expect.stringMatching(/^#\/components\/schemas\//) } });
      expect(doc.components.schemas![data.contentSchema.$ref.split("/").pop()], data.contentSchema.$ref).toBeDefined();
    }
  });
});
