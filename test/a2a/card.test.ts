import { describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { call, newAccount, signIn, newToken, world } from "../helpers";
import { agentPath, ORIGIN, rpc, resultOf } from "./a2a-helpers";

const cardPath = (projectId: string) => `${agentPath(projectId)}/.well-known/agent-card.json`;

describe("the agent card", () => {
  it("is public and the same for any project id: a made-up one gets its own URLs and nothing else differs", async () => {
    const w = await world();
    const made = crypto.randomUUID();
    const real = await call("GET", cardPath(w.projectId), { headers: { "a2a-version": "1.0" } });
    const fake = await call("GET", cardPath(made), { headers: { "a2a-version": "1.0" } });
    expect(real.status, real.text).toBe(200);
    expect(fake.text.replaceAll(made, w.projectId)).toBe(real.text);
    expect(real.text).not.toContain("test project");
    const url = `${ORIGIN}${agentPath(w.projectId)}`;
    expect(real.json).toMatchObject({
      name: "Project chat agent",
      version: packageJson.version,
      provider: { organization: "Project Chat", url: ORIGIN },
      supportedInterfaces: [
        { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: `${url}/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
        { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      ],
      capabilities: { streaming: true, extendedAgentCard: true },
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["text/plain"],
      securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth2: { list: ["chat:read", "chat:write"] } } }],
    });
    expect(real.json.capabilities.extensions.map((e: { uri: string }) => e.uri)).toEqual([
      "urn:project-chat:a2a:question:v1",
      "urn:project-chat:a2a:usage:v1",
      "urn:project-chat:a2a:event-id:v1",
    ]);
    expect(real.json.securitySchemes.oauth2.oauth2SecurityScheme.flows.authorizationCode).toMatchObject({
      authorizationUrl: `${ORIGIN}/oauth/authorize`,
      tokenUrl: `${ORIGIN}/oauth/token`,
      pkceRequired: true,
    });
    expect(real.json.signatures).toBeUndefined();
    expect(real.json.skills).toHaveLength(1);
  });

  it("comes in the v0.3 shape with A2A-Version: 0.3, and without a version as the whole v1.0 card plus the fields a v0.3 client reads", async () => {
    const projectId = crypto.randomUUID();
    const bare = await call("GET", cardPath(projectId));
    const legacy = await call("GET", cardPath(projectId), { headers: { "a2a-version": "0.3" } });
    const modern = await call("GET", cardPath(projectId), { headers: { "a2a-version": "1.0" } });
    const v03Fields = {
      protocolVersion: "0.3.0",
      url: `${ORIGIN}${agentPath(projectId)}`,
      preferredTransport: "JSONRPC",
      additionalInterfaces: [{ url: `${ORIGIN}${agentPath(projectId)}`, transport: "JSONRPC" }],
      supportsAuthenticatedExtendedCard: true,
      security: [{ bearer: [] }, { oauth2: ["chat:read", "chat:write"] }],
    };
    expect(legacy.status).toBe(200);
    expect(legacy.json).toMatchObject({ ...v03Fields, securitySchemes: { bearer: { type: "http", scheme: "bearer" }, oauth2: { type: "oauth2" } } });
    expect(legacy.json.supportedInterfaces).toHaveLength(3);
    // Without a version: every field of the v1.0 card as it is (its v1.0 securitySchemes and securityRequirements,
    // capabilities.extendedAgentCard), and the v0.3 fields beside them, which a v1.0 reader ignores.
    expect(bare.status).toBe(200);
    expect(bare.json).toEqual({ ...modern.json, ...v03Fields });
    expect(bare.json.capabilities.extendedAgentCard).toBe(true);
    expect(bare.json.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe("Bearer");
  });

  it("is also served at agent.json, the name some clients still ask for", async () => {
    const projectId = crypto.randomUUID();
    const path = `${agentPath(projectId)}/.well-known/agent.json`;
    for (const version of [undefined, "0.3", "1.0"]) {
      const headers: Record<string, string> = version ? { "a2a-version": version } : {};
      const [alias, card] = [await call("GET", path, { headers }), await call("GET", cardPath(projectId), { headers })];
      expect(alias.status).toBe(200);
      expect(alias.text).toBe(card.text);
    }
  });

  it("is cacheable: an ETag of its bytes, 304 for it, Vary A2A-Version, CORS for any origin, and no credentials or count", async () => {
    const projectId = crypto.randomUUID();
    const first = await call("GET", cardPath(projectId), { headers: { "a2a-version": "1.0", origin: "https://elsewhere.example" } });
    expect(first.headers.get("cache-control")).toBe("public, max-age=300");
    expect(first.headers.get("vary")).toBe("A2A-Version");
    expect(first.headers.get("access-control-allow-origin")).toBe("*");
    expect(first.headers.get("ratelimit")).toBeNull();
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await call("GET", cardPath(projectId), { headers: { "a2a-version": "1.0", "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    // The v0.3 card is another representation, with its own validator.
    expect((await call("GET", cardPath(projectId), { headers: { "if-none-match": etag } })).status).toBe(200);
  });

  it("refuses a version it does not speak with the HTTP+JSON error body, and a path that is no UUID with 404", async () => {
    const r = await call("GET", cardPath(crypto.randomUUID()), { headers: { "a2a-version": "2.0" } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 400, details: [{ reason: "VERSION_NOT_SUPPORTED", domain: "a2a-protocol.org" }] });
    // Only Major.Minor counts.
    expect((await call("GET", cardPath(crypto.randomUUID()), { headers: { "a2a-version": "1.0.1" } })).json.supportedInterfaces).toBeDefined();
    expect((await call("GET", "/a2a/projects/not-a-uuid/.well-known/agent-card.json")).status).toBe(404);
  });

  it("is 405 with Allow for other methods on the agent's paths", async () => {
    const projectId = crypto.randomUUID();
    const put = await call("PUT", cardPath(projectId));
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toContain("GET");
    const get = await call("GET", agentPath(projectId));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toContain("POST");
  });

  it("extended: names the project for a member, and is a task not found for anyone else", async () => {
    const w = await world();
    const card = await resultOf(rpc(w.token, w.projectId, "GetExtendedAgentCard"));
    expect(card.name).toBe("test project");
    expect(card.description).toContain("test project");
    const stranger = await newToken(await signIn(await newAccount()));
    const refused = await rpc(stranger, w.projectId, "GetExtendedAgentCard");
    expect(refused.json.error).toMatchObject({ code: -32001, message: "Task not found" });
  });
});
