import { describe, expect, it, vi } from "vitest";
import { LOOKUPS_PER_ADDRESS } from "../../src/oauth/client-metadata";
import { call, newAccount } from "../helpers";
import { Browser, textOf } from "./browser";
import { fakeDocuments } from "./client-documents";
import { approve, authorizePath, exchangeCode, pkce, REDIRECT_URI, signInThere, tokenRequest } from "./flow";

const documentFor = (clientId: string) => Response.json({ client_id: clientId, client_name: "Connector", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
// A new address at each call: the per-address counter is shared with registrations, and the file's tests share storage.
let addresses = 0;
const fromAddress = () => ({ "cf-connecting-ip": `198.51.100.${++addresses}` });
const authorize = async (clientId: string, headers: Record<string, string> = fromAddress()) => new Browser().get(authorizePath(clientId, (await pkce()).challenge), headers);

describe("client-id URLs (Client ID Metadata Documents)", () => {
  it.each([
    ["a loopback address and port", "https://127.0.0.1:9443/client.json"],
    ["localhost", "https://localhost/client.json"],
    ["a name under localhost", "https://app.localhost/client.json"],
    ["0.0.0.0", "https://0.0.0.0/client.json"],
    ["a decimal IPv4 address", "https://2130706433/client.json"],
    ["a hex IPv4 address", "https://0x7f.1/client.json"],
    ["an octal IPv4 address", "https://0177.0.0.1/client.json"],
    ["a private address", "https://10.1.2.3/client.json"],
    ["the metadata address", "https://169.254.169.254/latest/meta-data"],
    ["a public IPv4 address", "https://203.0.113.9/client.json"],
    ["an IPv6 address", "https://[::1]/client.json"],
    ["a single label", "https://intranet/client.json"],
    ["a private suffix", "https://auth.corp.internal/client.json"],
    ["a special-use suffix", "https://connector.test/client.json"],
    ["a port that is not the default", "https://connector.example.com:8443/client.json"],
    ["plain http", "http://connector.example.com/client.json"],
  ])("refuses %s with the error page, fetching nothing", async (_, clientId) => {
    const fetched = await fakeDocuments(() => documentFor(clientId));
    const page = await authorize(clientId);
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    expect(textOf(page.text)).toContain("This authorization cannot go on");
    expect(fetched).toEqual([]);
  });

  it("follows no redirect: a 3xx is a failed lookup, and its Location is never fetched", async () => {
    const clientId = "https://redirects.example.com/client.json";
    const fetched = await fakeDocuments(() => new Response(null, { status: 302, headers: { location: "https://169.254.169.254/" } }));
    const page = await authorize(clientId);
    expect(page.status).toBe(400);
    expect(textOf(page.text)).toContain("could not be fetched");
    expect(fetched).toEqual([clientId]);
  });

  it("reads at most 5 KB of a document", async () => {
    const clientId = "https://large.example.com/client.json";
    const fetched = await fakeDocuments(() => Response.json({ client_id: clientId, redirect_uris: [REDIRECT_URI], client_name: "x".repeat(6000) }));
    expect((await authorize(clientId)).status).toBe(400);
    expect(fetched).toEqual([clientId]);
  });

  it("gives up on a document that takes more than 3 s", async () => {
    const clientId = "https://slow.example.com/client.json";
    const signals: AbortSignal[] = [];
    await fakeDocuments(
      (_, init) =>
        new Promise<Response>((_, reject) => {
          signals.push(init!.signal!);
          init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason));
        }),
    );
    const started = Date.now();
    const page = await authorize(clientId);
    expect(page.status).toBe(400);
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(signals[0]!.aborted).toBe(true);
  });

  it("looks a client id up once: the document is cached, and so is a failure", async () => {
    const good = "https://cached.example.com/client.json";
    const bad = "https://missing.example.com/client.json";
    const fetched = await fakeDocuments((url) => (url === good ? documentFor(good) : new Response("no", { status: 404 })));
    const address = fromAddress();
    for (let i = 0; i < 3; i++) {
      expect((await authorize(good, address)).status).toBe(200);
      expect((await authorize(bad, address)).status).toBe(400);
    }
    expect(fetched).toEqual([good, bad]);
  });

  it(`counts lookups against the address's registrations: the ${LOOKUPS_PER_ADDRESS + 1}st answers 429 and fetches nothing`, async () => {
    const fetched = await fakeDocuments((url) => documentFor(url));
    const address = fromAddress();
    for (let i = 0; i < LOOKUPS_PER_ADDRESS; i++) expect((await authorize(`https://app-${i}.example.com/client.json`, address)).status).toBe(200);
    const refused = await authorize("https://one-more.example.com/client.json", address);
    expect(refused.status).toBe(429);
    expect(fetched).toHaveLength(LOOKUPS_PER_ADDRESS);
    expect((await call("POST", "/oauth/register", { headers: address, body: { redirect_uris: [REDIRECT_URI] } })).status).toBe(429);
  });

  it("logs a failed lookup by its host only, at most once a minute per address", async () => {
    const warn = vi.spyOn(console, "warn");
    await fakeDocuments(() => new Response("no", { status: 500 }));
    const address = fromAddress();
    await authorize("https://down.example.com/secret-path/client.json?visitor=abc", address);
    await authorize("https://down-too.example.com/other/client.json", address);
    const lines = warn.mock.calls.map((args) => args.join(" "));
    const lookups = lines.filter((line) => line.includes("client_metadata_lookup_failed"));
    expect(lookups).toHaveLength(1);
    expect(lookups[0]).toContain('"host":"down.example.com"');
    expect(lines.join("\n")).not.toMatch(/secret-path|visitor=abc|down-too/);
  });

  it("signs a metadata-document client in end to end, and refuses at the token endpoint what it refuses at the page", async () => {
    const clientId = "https://connector.example.com/oauth/client.json";
    const fetched = await fakeDocuments((url) => (url === clientId ? documentFor(clientId) : new Response("no", { status: 404 })));
    const account = await newAccount();
    const { verifier, challenge } = await pkce();
    const path = authorizePath(clientId, challenge);
    const browser = new Browser();
    const consent = await signInThere(browser, path, account);
    const code = (await approve(browser, path, consent.text)).get("code")!;
    const tokens = await exchangeCode(clientId, code, verifier);
    expect(tokens.status, tokens.text).toBe(200);
    expect(fetched).toEqual([clientId]);
    const refused = await tokenRequest({ grant_type: "refresh_token", client_id: "https://169.254.169.254/client.json", refresh_token: tokens.json.refresh_token });
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe("invalid_client");
    expect(fetched).toEqual([clientId]);
  });

  it("never lets the library fetch anything but a document a lookup found (a jwks_uri included)", async () => {
    const fetched = await fakeDocuments(() => new Response("{}"));
    const asked = await fetch("https://keys.example.com/jwks.json", { headers: { "user-agent": "workers-oauth-provider/9 (+test)", accept: "application/json" } });
    expect(asked.status).toBe(502);
    expect(fetched).toEqual([]);
  });
});
