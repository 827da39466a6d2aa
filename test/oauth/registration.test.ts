import { describe, expect, it } from "vitest";
import { call, env } from "../helpers";
import { register, REDIRECT_URI } from "./flow";

describe("dynamic client registration (RFC 7591)", () => {
  it("registers a public client: an id, no secret, its redirect URIs and name as sent", async () => {
    const r = await register({ client_name: "Claude", redirect_uris: [REDIRECT_URI, "http://127.0.0.1:33418/callback", "com.example.app:/oauth"] });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ client_id: expect.any(String), client_name: "Claude", token_endpoint_auth_method: "none" });
    expect(r.json.client_secret).toBeUndefined();
    expect(r.json.redirect_uris).toHaveLength(3);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("registers a confidential client with a secret shown once, stored only as a hash", async () => {
    const r = await register({ token_endpoint_auth_method: "client_secret_post" });
    expect(r.status, r.text).toBe(201);
    expect(r.json.client_secret).toEqual(expect.any(String));
    const stored = await env.OAUTH_KV.get(`client:${r.json.client_id}`);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(r.json.client_secret);
  });

  it("refuses http redirect URIs to other machines, even beside good ones", async () => {
    for (const uris of [["http://client.example/callback"], [REDIRECT_URI, "http://client.example/callback"]]) {
      const r = await register({ redirect_uris: uris });
      expect(r.status, r.text).toBe(400);
      expect(["invalid_client_metadata", "invalid_redirect_uri"]).toContain(r.json.error);
    }
  });

  it("refuses metadata that is not acceptable: no redirect URI, a dangerous scheme, a fragment, not JSON", async () => {
    for (const metadata of [{ redirect_uris: [] }, { redirect_uris: ["javascript:alert(1)"] }, { redirect_uris: [`${REDIRECT_URI}#x`] }, { redirect_uris: "not a list" }]) {
      const r = await register(metadata);
      expect(r.status, `${JSON.stringify(metadata)}: ${r.text}`).toBe(400);
      expect(["invalid_client_metadata", "invalid_redirect_uri"]).toContain(r.json.error);
    }
    const notJson = await call("POST", "/oauth/register", { raw: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
  });

  it("bounds registrations per client address: the 21st in 15 minutes is 429 with Retry-After, another address goes on", async () => {
    const address = { "cf-connecting-ip": `203.0.113.${Math.floor(Math.random() * 250)}` };
    const answers = await Promise.all(Array.from({ length: 25 }, () => register({}, address)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(20);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited[0]!.json.error).toBe("temporarily_unavailable");
    expect((await register({}, { "cf-connecting-ip": "2001:db8:77::1" })).status).toBe(201);
  });
});
