import { describe, expect, it } from "vitest";
import { call, env } from "../helpers";
import { register, REDIRECT_URI } from "./flow";

// An address of its own per registration in the tests below, which register more than the per-address bound in all.
const anyAddress = () => ({ "cf-connecting-ip": `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}::1` });

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

  it("refuses a client_name over 200 characters (each language variant too), and keeps one of 200 whole", async () => {
    for (const field of ["client_name", "client_name#ja"]) {
      const r = await register({ [field]: "n".repeat(201) }, anyAddress());
      expect(r.status, r.text).toBe(400);
      expect(r.json.error).toBe("invalid_client_metadata");
      expect(r.json.error_description).toContain(field);
    }
    const longest = await register({ client_name: "n".repeat(200) }, anyAddress());
    expect(longest.status, longest.text).toBe(201);
    expect(longest.json.client_name).toBe("n".repeat(200));
  });

  it.each(["logo_uri", "client_uri", "policy_uri", "tos_uri", "jwks_uri"])("takes %s only as an https URL on a public name, naming the field otherwise", async (field) => {
    for (const bad of [
      "http://connector.example.com/x",
      "https://127.0.0.1/x",
      "https://169.254.169.254/x",
      "https://localhost/x",
      "https://intranet/x",
      "https://[::1]/x",
      "not a url",
    ]) {
      const r = await register({ [field]: bad }, anyAddress());
      expect(r.status, `${bad}: ${r.text}`).toBe(400);
      expect(r.json.error).toBe("invalid_client_metadata");
      expect(r.json.error_description).toContain(field);
    }
    const good = await register({ [field]: "https://connector.example.com/x" }, anyAddress());
    expect(good.status, good.text).toBe(201);
  });
});
