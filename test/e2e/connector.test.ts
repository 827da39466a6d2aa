// The connector flow as a hosted AI client and a person go through it, against wrangler dev: the official MCP SDK
// client's OAuth provider discovers and registers, headless Chromium signs in and approves on the service's pages,
// the client exchanges the code and lists the tools; then the account page makes a token and disconnects the app.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const base = inject("base");
// Where the connector wants the code: nothing listens there; the test takes the browser's request to it.
const CALLBACK = "http://127.0.0.1:9/connector/callback";
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** A connector's side of OAuth, kept in memory: what the MCP SDK asks a client application to store. */
class ConnectorAuth implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  readonly redirectUrl = CALLBACK;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: "E2E Connector",
    redirect_uris: [CALLBACK],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  clientInformation = () => this.client;
  saveClientInformation = (client: OAuthClientInformationMixed) => void (this.client = client);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

const transportFor = (auth: ConnectorAuth) => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: auth });

async function newAccount() {
  const email = `e2e-${crypto.randomUUID()}@example.test`;
  const password = `pw-${crypto.randomUUID()}`;
  const headers = { authorization: `Bearer ${inject("adminToken")}`, "content-type": "application/json" };
  const account = await fetch(`${base}/admin/accounts`, { method: "POST", headers, body: JSON.stringify({ email, password, credits: 10 }) });
  expect(account.status).toBe(201);
  const { id } = (await account.json()) as { id: string };
  expect((await fetch(`${base}/admin/projects`, { method: "POST", headers, body: JSON.stringify({ name: "E2E project", ownerAccountId: id }) })).status).toBe(201);
  return { email, password };
}

/** Follows the browser to the connector's callback and answers where it was sent. */
async function untilCallback(act: () => Promise<unknown>): Promise<URL> {
  const reached = new Promise<URL>((resolve) =>
    page.route(`${CALLBACK}**`, (route) => {
      resolve(new URL(route.request().url()));
      return route.fulfill({ status: 200, contentType: "text/plain", body: "connected" });
    }),
  );
  await act();
  return reached;
}

async function signIn(account: { email: string; password: string }) {
  await page.getByLabel("Email").fill(account.email);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

beforeAll(async () => {
  // Every host name but the loopback address fails to resolve: the pages need nothing from the internet.
  browser = await chromium.launch({ executablePath: inject("chromium"), args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"] });
  page = await browser.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  // Any script, style or other resource a page failed to load, or a policy refused.
  page.on("console", (message) => message.type() === "error" && pageErrors.push(message.text()));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (pageErrors.length) throw new Error(`errors in the pages:\n${pageErrors.join("\n")}`);
});

describe("a hosted connector and a person, in Chromium", () => {
  const account = newAccount();
  const auth = new ConnectorAuth();

  it("connects: the SDK registers and asks, the person signs in and approves, the SDK exchanges the code and lists the tools", async () => {
    const person = await account;
    const first = new Client({ name: "e2e-connector", version: "1.0.0" });
    const transport = transportFor(auth);
    await expect(first.connect(transport)).rejects.toThrow(/Unauthorized/i);
    expect(auth.client?.client_id).toEqual(expect.any(String));
    expect(auth.authorizationUrl?.origin).toBe(base);
    expect(auth.authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");

    await page.goto(auth.authorizationUrl!.href);
    await signIn(person);
    await expect(page.getByRole("heading", { name: "Connect E2E Connector to your Project Chat account?" }).isVisible()).resolves.toBe(true);
    expect(await page.getByText("chat:write").isVisible()).toBe(true);
    expect(await page.getByText(person.email).isVisible()).toBe(true);
    const callback = await untilCallback(() => page.getByRole("button", { name: "Approve" }).click());
    expect(callback.searchParams.get("state")).toBe(auth.authorizationUrl!.searchParams.get("state"));

    await transport.finishAuth(callback.searchParams.get("code")!);
    expect(auth.saved?.access_token).toEqual(expect.any(String));
    const client = new Client({ name: "e2e-connector", version: "1.0.0" });
    await client.connect(transportFor(auth));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("list_projects");
    const projects = await client.callTool({ name: "list_projects", arguments: {} });
    expect(JSON.stringify(projects.structuredContent)).toContain("E2E project");
    await client.close();

    // The same access token on revision 2026-07-28, through the v2 SDK's client.
    const modern = new ClientV2({ name: "e2e-connector", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(new TransportV2(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${auth.saved!.access_token}` } } }));
    expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const listed = await modern.callTool({ name: "list_projects", arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain("E2E project");
    await modern.close();
  });

  it("makes a token on the account page, shows its secret once, and disconnects the app", async () => {
    await page.goto(`${base}/account`);
    // The browser is still signed in from approving: the page opens at once.
    await page.getByLabel("Name").fill("from the browser");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = (await page.locator(".secret").textContent())!;
    expect(secret).toMatch(/^pct_/);
    expect(await page.getByText("it will not be shown again").isVisible()).toBe(true);
    const projects = await fetch(`${base}/v1/projects`, { headers: { authorization: `Bearer ${secret}` } });
    expect(projects.status).toBe(200);
    await page.goto(`${base}/account`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByRole("cell", { name: "from the browser" }).isVisible()).toBe(true);

    const app = page.getByRole("row").filter({ hasText: "E2E Connector" });
    await app.getByRole("button", { name: "Revoke" }).click();
    expect(await page.getByText("The app is disconnected").isVisible()).toBe(true);
    expect(await page.getByText("No apps are connected.").isVisible()).toBe(true);
    const refused = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${auth.saved!.access_token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });
});
