import { describe, expect, it, vi } from "vitest";
import { newAccount } from "../helpers";
import { expectPageSecurity } from "../http/page-security";
import { Browser, field, textOf } from "./browser";
import { fakeDocuments } from "./client-documents";
import { authorizePath, consentForm, MCP_RESOURCE, pkce, REDIRECT_URI, register, registeredClient, signInThere } from "./flow";

/** A fresh client, PKCE and the path of its authorization request. */
async function request(extra: Record<string, string> = {}, metadata: Record<string, unknown> = {}) {
  const clientId = await registeredClient(metadata);
  const { challenge, verifier } = await pkce();
  return { clientId, verifier, path: authorizePath(clientId, challenge, extra) };
}

const redirectQuery = (r: { status: number; headers: Headers; text: string }) => {
  expect(r.status, r.text).toBe(303);
  const location = new URL(r.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
};

describe("GET /oauth/authorize", () => {
  it("shows an error page, never a redirect, for an unknown client or a redirect URI it did not register", async () => {
    const { clientId } = await request();
    const { challenge } = await pkce();
    for (const path of [
      authorizePath("no-such-client", challenge),
      authorizePath(clientId, challenge, { redirect_uri: "https://attacker.example/callback" }),
      authorizePath(clientId, challenge, { redirect_uri: "" }),
    ]) {
      const r = await new Browser().get(path);
      expect(r.status, path).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(r.headers.get("content-type")).toContain("text/html");
      expect(textOf(r.text)).toContain("This authorization cannot go on");
      expect(r.text).not.toContain("attacker.example");
      expectPageSecurity(r);
    }
  });

  it("shows a sign-in form with its inputs labelled, under the page policy, never cached", async () => {
    const { path } = await request();
    const r = await new Browser().get(path);
    expect(r.status).toBe(200);
    const csp = expectPageSecurity(r);
    // A consent form's answer redirects to the client, which form-action 'self' would block.
    expect(csp.has("form-action")).toBe(false);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toMatch(/<label>Email<input type="email" name="email"/);
    expect(r.text).toMatch(/<label>Password<input type="password" name="password"/);
    expect(r.text).toContain('<button type="submit">Sign in</button>');
    expect(r.text).toContain(`action="${path.replaceAll("&", "&amp;")}"`);
  });

  it("answers wrong credentials with one message for both, and keeps the throttle", async () => {
    const account = await newAccount();
    const { path } = await request();
    const browser = new Browser();
    const page = await browser.get(path);
    const attempt = (email: string, password: string) => browser.post(path, { step: "sign-in", csrf: field(page.text, "csrf"), email, password });
    const wrong = await attempt(account.email, "wrong-password");
    const unknown = await attempt(`x-${account.email}`, "wrong-password");
    expect(wrong.status).toBe(401);
    expect(textOf(wrong.text)).toContain("The email or password is wrong.");
    expect(textOf(unknown.text)).toContain("The email or password is wrong.");
    for (let i = 0; i < 9; i++) await attempt(account.email, "wrong-password");
    const throttled = await attempt(account.email, account.password);
    expect(throttled.status).toBe(429);
    expect(textOf(throttled.text)).toMatch(/Too many failed sign-ins .* Try again in \d+ minutes/);
  });

  it("refuses a sign-in post without this browser's form token", async () => {
    const account = await newAccount();
    const { path } = await request();
    const other = new Browser();
    const othersToken = field((await other.get(path)).text, "csrf");
    const browser = new Browser();
    await browser.get(path);
    for (const csrf of [undefined, "", othersToken]) {
      const r = await browser.post(path, { step: "sign-in", email: account.email, password: account.password, ...(csrf === undefined ? {} : { csrf }) });
      expect(r.status).toBe(400);
      expect(textOf(r.text)).toContain("This form has expired");
      expect([...browser.cookies.keys()]).not.toContain("__Host-account");
    }
  });

  it("signs in with a fresh session and returns only to this authorization request", async () => {
    const account = await newAccount();
    const { path } = await request();
    const browser = new Browser();
    browser.cookies.set("__Host-account", "pcs_planted");
    const consent = await signInThere(browser, path, account);
    expect(browser.cookies.get("__Host-account")).toMatch(/^pcs_/);
    expect(browser.cookies.get("__Host-account")).not.toBe("pcs_planted");
    expect(consent.status).toBe(200);
    expect(textOf(consent.text)).toContain(`Signed in as ${account.email}`);
  });

  it("shows the consent screen: the name marked unverified, where access goes, each scope and its sentence, the account, Approve and Deny", async () => {
    const account = await newAccount();
    // The longest name registration keeps (200 characters): the page shows its first 100.
    const { path } = await request({}, { client_name: `<script>alert(1)</script>${"n".repeat(175)}` });
    const page = await signInThere(new Browser(), path, account);
    const text = textOf(page.text);
    expect(page.text).not.toContain("<script>alert");
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(text).toContain(`<script>alert(1)</script>${"n".repeat(75)} `);
    expect(text).not.toContain("n".repeat(76));
    expect(text).toContain("unverified");
    expect(text).toContain("access is sent to client.example");
    expect(text).toContain("chat:read : Read your projects");
    expect(text).toContain("chat:write : Create chats, send messages");
    expect(text).toContain(account.email);
    expect(page.text).toContain('value="approve">Approve</button>');
    expect(page.text).toContain('value="deny">Deny</button>');
    expectPageSecurity(page);
    expect(page.headers.get("cache-control")).toBe("no-store");
  });

  it("asks only for the scopes asked, both when none are, and answers invalid_scope when none it has is asked", async () => {
    const account = await newAccount();
    const browser = new Browser();
    const readOnly = await signInThere(browser, (await request({ scope: "chat:read offline_access" })).path, account);
    expect(textOf(readOnly.text)).toContain("chat:read");
    expect(textOf(readOnly.text)).not.toContain("chat:write");
    const unknown = redirectQuery(await browser.get((await request({ scope: "openid profile" })).path));
    expect(unknown.get("error")).toBe("invalid_scope");
    expect(unknown.get("state")).toBe("state-123");
  });

  it("warns when access goes to an app on this computer", async () => {
    const account = await newAccount();
    const loopback = "http://127.0.0.1:33418/callback";
    const clientId = await registeredClient({ redirect_uris: [loopback] });
    const path = authorizePath(clientId, (await pkce()).challenge, { redirect_uri: loopback });
    const page = await signInThere(new Browser(), path, account);
    expect(textOf(page.text)).toContain("That is an app on this computer");
  });

  it("requires S256 PKCE from every client, confidential ones too, and refuses another resource, by redirecting the error to the client", async () => {
    const publicClient = await registeredClient();
    const confidential = await register({ token_endpoint_auth_method: "client_secret_post" });
    const browser = new Browser();
    const { challenge } = await pkce();
    for (const path of [
      authorizePath(publicClient, null),
      authorizePath(confidential.json.client_id, null),
      authorizePath(publicClient, challenge, { code_challenge_method: "plain" }),
      authorizePath(publicClient, challenge, { resource: "https://elsewhere.example/mcp" }),
    ]) {
      const query = redirectQuery(await browser.get(path));
      expect(["invalid_request", "invalid_target"], path).toContain(query.get("error"));
      expect(query.get("state")).toBe("state-123");
      expect(query.get("code")).toBeNull();
    }
    expect(redirectQuery(await browser.get(authorizePath(publicClient, challenge, { resource: "https://elsewhere.example/mcp" }))).get("error")).toBe("invalid_target");
    // The /mcp URL itself is the one resource.
    expect((await browser.get(authorizePath(publicClient, challenge, { resource: MCP_RESOURCE }))).status).toBe(200);
  });

  it("names a metadata-document client by its domain, fetching the document it points at", async () => {
    const account = await newAccount();
    const clientId = "https://connector.example.com/oauth/client.json";
    const documents = await fakeDocuments((url) =>
      url === clientId
        ? Response.json({ client_id: clientId, client_name: "Connector", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
        : new Response("not here", { status: 404 }),
    );
    const path = authorizePath(clientId, (await pkce()).challenge);
    const page = await signInThere(new Browser(), path, account);
    expect(documents).toEqual([clientId]);
    expect(textOf(page.text)).toContain("Connect connector.example.com to your Project Chat account?");
    expect(textOf(page.text)).toContain("published at connector.example.com");
    expect(textOf(page.text)).not.toContain("unverified");
  });
});

describe("POST /oauth/authorize (the consent form)", () => {
  async function consentFor(account: { email: string; password: string }, browser = new Browser()) {
    const r = await request({ resource: MCP_RESOURCE });
    const page = await signInThere(browser, r.path, account);
    return { ...r, browser, page };
  }

  it("denies: the client is told access_denied with its state and this issuer, and no code", async () => {
    const account = await newAccount();
    const { browser, path, page } = await consentFor(account);
    const query = redirectQuery(await browser.post(path, { ...consentForm(page.text), decision: "deny" }));
    expect(query.get("error")).toBe("access_denied");
    expect(query.get("state")).toBe("state-123");
    expect(query.get("iss")).toBe("https://service.test");
    expect(query.get("code")).toBeNull();
  });

  it("refuses a post without the form token, with another's, or for another request, on a page of its own", async () => {
    const account = await newAccount();
    const { browser, path, page } = await consentFor(account);
    const form = consentForm(page.text);
    const otherAccount = await consentFor(await newAccount());
    const sameAccountOtherRequest = await consentFor(account, browser);
    for (const posted of [
      { ...form, csrf: "" },
      { ...form, csrf: consentForm(otherAccount.page.text).csrf },
      { ...form, nonce: consentForm(sameAccountOtherRequest.page.text).nonce },
      { ...form, issued: String(Number(form.issued) + 1) },
    ]) {
      const r = await browser.post(path, { ...posted, decision: "approve" });
      expect(r.status).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(textOf(r.text)).toContain("Nothing was approved");
    }
    // Another account's session cannot use this form either.
    const r = await otherAccount.browser.post(path, { ...form, decision: "approve" });
    expect(r.status).toBe(400);
  });

  it("takes a form once: a replayed approval is refused", async () => {
    const account = await newAccount();
    const { browser, path, page } = await consentFor(account);
    const form = { ...consentForm(page.text), decision: "approve" };
    const [first, second] = [await browser.post(path, form), await browser.post(path, form)];
    expect(first.status).toBe(303);
    expect(second.status).toBe(409);
    expect(textOf(second.text)).toContain("used already");
    // Nor can a denied form be approved afterwards.
    const denied = await consentFor(account, browser);
    const deniedForm = consentForm(denied.page.text);
    expect((await browser.post(denied.path, { ...deniedForm, decision: "deny" })).status).toBe(303);
    expect((await browser.post(denied.path, { ...deniedForm, decision: "approve" })).status).toBe(409);
  });

  it("refuses a form older than half an hour", async () => {
    const account = await newAccount();
    const { browser, path, page } = await consentFor(account);
    const form = consentForm(page.text);
    vi.spyOn(Date, "now").mockReturnValue(Number(form.issued) + 31 * 60_000);
    const r = await browser.post(path, { ...form, decision: "approve" });
    expect(r.status).toBe(400);
    expect(textOf(r.text)).toContain("expired");
  });

  it("asks a browser whose session ended to sign in again", async () => {
    const account = await newAccount();
    const { browser, path, page } = await consentFor(account);
    browser.cookies.delete("__Host-account");
    const r = await browser.post(path, { ...consentForm(page.text), decision: "approve" });
    expect(r.status).toBe(401);
    expect(textOf(r.text)).toContain("Sign in again");
  });
});
