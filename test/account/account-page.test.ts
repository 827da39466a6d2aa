import { describe, expect, it } from "vitest";
import { call, env, expectProblem, ledger, newToken, signIn, world, type World } from "../helpers";
import { expectPageSecurity } from "../http/page-security";
import { Browser, field, textOf } from "../oauth/browser";
import { connect, mcpCall } from "../oauth/flow";

/** A browser signed in on the account page; answers the page it lands on. */
async function signedIn(account: { email: string; password: string }, browser = new Browser()) {
  const form = await browser.get("/account");
  const r = await browser.post("/account/sign-in", { csrf: field(form.text, "csrf"), email: account.email, password: account.password });
  expect(r.status, r.text).toBe(303);
  expect(r.headers.get("location")).toBe("/account");
  return { browser, page: await browser.get("/account") };
}

/** The creation form's fields on a page, filled in. */
const creation = (html: string, fields: Record<string, string | string[]> = {}) => ({
  nonce: field(html, "nonce"),
  csrf: html.match(/name="nonce" value="[^"]*"\/><input type="hidden" name="csrf" value="([^"]*)"/)![1]!,
  name: "deploy script",
  scope: ["chat:read", "chat:write"],
  days: "30",
  ...fields,
});

/** The CSRF token of a row's Revoke button. */
const revokeCsrf = (html: string, action: string) => html.match(new RegExp(`action="${action}" class="inline"><input type="hidden" name="csrf" value="([^"]*)"`))![1]!;

const tokenCount = async (w: World) => (await call("GET", "/auth/api-tokens", { token: w.session })).json.items.length as number;

describe("the account page, signed out", () => {
  it("is a sign-in form with labelled inputs, under its own policy, never cached", async () => {
    const r = await new Browser().get("/account");
    expect(r.status).toBe(200);
    const csp = expectPageSecurity(r);
    expect(csp.get("form-action")).toBe("'self'");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toMatch(/<label>Email<input type="email" name="email"/);
    expect(r.text).toMatch(/<label>Password<input type="password" name="password"/);
    expect(r.text).toContain('<button type="submit">Sign in</button>');
    expect(r.text).toContain('action="/account/sign-in"');
  });

  it("signs in with a cookie of its own: __Host-account on https, HttpOnly, SameSite=Lax, Path=/", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    expect(textOf(page.text)).toContain(`Signed in as ${w.account.email}`);
    const cookie = browser.setCookies.find((line) => line.startsWith("__Host-account=pcs_"))!;
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(browser.cookies.has("session")).toBe(false);
  });

  it("uses account_session on plain http (loopback development), not Secure", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account, new Browser("http://127.0.0.1:8787"));
    expect(textOf(page.text)).toContain(`Signed in as ${w.account.email}`);
    const cookie = browser.setCookies.find((line) => line.startsWith("account_session=pcs_"))!;
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
  });

  it("shows problems as messages: wrong credentials, a missing form token", async () => {
    const w = await world();
    const browser = new Browser();
    const form = await browser.get("/account");
    const wrong = await browser.post("/account/sign-in", { csrf: field(form.text, "csrf"), email: w.account.email, password: "wrong-password" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("content-type")).toContain("text/html");
    expect(textOf(wrong.text)).toContain("The email or password is wrong.");
    const forged = await browser.post("/account/sign-in", { email: w.account.email, password: w.account.password });
    expect(forged.status).toBe(400);
    expect(textOf(forged.text)).toContain("This form has expired");
    expect(browser.cookies.has("__Host-account")).toBe(false);
  });
});

describe("the account page, signed in", () => {
  it("shows the balance and the ten newest statement entries with their project's name", async () => {
    const w = await world({ credits: 100 });
    for (let i = 0; i < 11; i++)
      await ledger(w.account.id).charge(w.account.id, crypto.randomUUID(), i + 1, { projectId: w.projectId, chatId: crypto.randomUUID(), submissionId: crypto.randomUUID() });
    const { page } = await signedIn(w.account);
    expectPageSecurity(page);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const text = textOf(page.text);
    expect(text).toContain(`Balance: ${100 - 66} credits`);
    const rows = page.text.split("<tbody>")[1]!.split("</tbody>")[0]!.split("<tr>").slice(1);
    expect(rows).toHaveLength(10);
    expect(textOf(rows[0]!)).toMatch(/UTC charge -11 34 test project/);
    expect(textOf(rows[9]!)).toMatch(/charge -2 /);
  });

  it("creates a token and shows its secret once, on the answering page only; sending that form again makes no second one", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    expect(page.text).toContain('<button type="submit">Create token</button>');
    expect(page.text).toMatch(/<label>Name<input type="text" name="name"/);
    expect(page.text).toContain('name="scope" value="chat:read"');
    expect(page.text).toContain('name="scope" value="chat:write"');
    const before = await tokenCount(w);
    const form = creation(page.text);
    const created = await browser.post("/account/tokens", form);
    expect(created.status, created.text).toBe(200);
    const secret = created.text.match(/class="secret">(pct_[0-9A-Za-z]+)</)![1]!;
    expect(textOf(created.text)).toContain("it will not be shown again");
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect((await call("GET", "/v1/projects", { token: secret })).status).toBe(200);
    expect(await tokenCount(w)).toBe(before + 1);
    const again = await browser.post("/account/tokens", form);
    expect(again.status).toBe(409);
    expect(textOf(again.text)).toContain("This form was sent already");
    expect(again.text).not.toContain(secret);
    expect(await tokenCount(w)).toBe(before + 1);
    const later = await browser.get("/account");
    expect(later.text).not.toContain(secret);
    expect(textOf(later.text)).toContain(`deploy script ${secret.slice(0, 12)}…`);
  });

  it("says so on the page when the account already has 20 tokens, a name is missing or too long, or no scope is chosen", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    for (const [fields, message] of [
      [{ name: "" }, "Give the token a name"],
      [{ name: "x".repeat(101) }, "Give the token a name"],
      [{ scope: [] }, "Choose at least one scope"],
      [{ days: "400" }, "Choose when the token expires"],
    ] as const) {
      const r = await browser.post("/account/tokens", creation(page.text, fields as Record<string, string | string[]>));
      expect(r.status).toBe(400);
      expect(textOf(r.text)).toContain(message);
    }
    while ((await tokenCount(w)) < 20) await newToken(w.session);
    const fresh = await browser.get("/account");
    const r = await browser.post("/account/tokens", creation(fresh.text, { name: "the twenty-first" }));
    expect(r.status).toBe(409);
    expect(textOf(r.text)).toContain("You have 20 active tokens, the most an account may have. Revoke one first.");
    expect(await tokenCount(w)).toBe(20);
  });

  it("escapes what it shows: a token named like markup is text", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    const r = await browser.post("/account/tokens", creation(page.text, { name: '<img src=x onerror="alert(1)">' }));
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("<img src=x");
    expect(r.text).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
  });

  it("refuses a form without this session's token: none, another purpose's, another session's", async () => {
    const w = await world();
    const other = await world();
    const mine = await signedIn(w.account);
    const theirs = await signedIn(other.account);
    const before = await tokenCount(w);
    const form = creation(mine.page.text);
    for (const csrf of ["", creation(theirs.page.text).csrf, field(mine.page.text, "csrf")]) {
      const r = await mine.browser.post("/account/tokens", { ...form, csrf });
      expect(r.status).toBe(400);
      expect(textOf(r.text)).toContain("nothing was done");
    }
    // My own form, posted from the other account's session.
    expect((await theirs.browser.post("/account/tokens", form)).status).toBe(400);
    expect(await tokenCount(w)).toBe(before);
  });

  it("revokes a token with its row's button", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    const [item] = (await call("GET", "/auth/api-tokens", { token: w.session })).json.items;
    const action = `/account/tokens/${item.id}/revoke`;
    expect((await browser.post(action, { csrf: "" })).status).toBe(400);
    const r = await browser.post(action, { csrf: revokeCsrf(page.text, action) });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/account?notice=token-revoked");
    expect(textOf((await browser.get(r.headers.get("location")!)).text)).toContain("The token is revoked");
    expectProblem(await call("GET", "/v1/projects", { token: w.token }), 401, "unauthorized");
    expect((await browser.post(action, { csrf: revokeCsrf(page.text, action) })).status).toBe(404);
  });

  it("sets and removes a token's and an app's credit limit with their rows' forms, and says what is wrong with a bad one", async () => {
    const w = await world();
    await connect(w.account);
    const { browser, page } = await signedIn(w.account);
    const [token] = (await call("GET", "/auth/api-tokens", { token: w.session })).json.items;
    const [app] = (await call("GET", "/auth/oauth-grants", { token: w.session })).json.items;
    for (const [action, list] of [
      [`/account/tokens/${token.id}/limit`, "/auth/api-tokens"],
      [`/account/apps/${app.id}/limit`, "/auth/oauth-grants"],
    ] as const) {
      const csrf = revokeCsrf(page.text, action);
      expect((await browser.post(action, { csrf: "", creditLimit: "5" })).status).toBe(400);
      const set = await browser.post(action, { csrf, creditLimit: "5" });
      expect(set.status).toBe(303);
      expect(set.headers.get("location")).toBe("/account?notice=limit-set");
      expect((await call("GET", list, { token: w.session })).json.items[0].creditLimit).toBe(5);
      expect(textOf((await browser.get(set.headers.get("location")!)).text)).toContain("The credit limit is set");
      for (const bad of ["0", "1.5", "x", "1000000001"]) {
        const r = await browser.post(action, { csrf, creditLimit: bad });
        expect(r.status).toBe(400);
        expect(textOf(r.text)).toContain("A credit limit is a whole number from 1 to 1000000000");
      }
      expect((await browser.post(action, { csrf, creditLimit: "" })).status).toBe(303);
      expect((await call("GET", list, { token: w.session })).json.items[0].creditLimit).toBeNull();
    }
    const other = await world();
    const theirs = await signedIn(other.account);
    const action = `/account/tokens/${token.id}/limit`;
    expect((await theirs.browser.post(action, { csrf: revokeCsrf(page.text, action), creditLimit: "1" })).status).toBe(400);
  });

  it("lists connected apps and disconnects one at once", async () => {
    const w = await world();
    const { accessToken } = await connect(w.account);
    const { browser, page } = await signedIn(w.account);
    expect(textOf(page.text)).toMatch(/Connected apps .* Test Connector chat:read, chat:write .* UTC never 0 used of Set limit Revoke/);
    const [app] = (await call("GET", "/auth/oauth-grants", { token: w.session })).json.items;
    const action = `/account/apps/${app.id}/revoke`;
    const r = await browser.post(action, { csrf: revokeCsrf(page.text, action) });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/account?notice=app-revoked");
    expectProblem(await mcpCall(accessToken, "tools/list"), 401, "unauthorized");
    expect(textOf((await browser.get("/account")).text)).toContain("No apps are connected.");
  });

  it("signs out: the session ends and the cookie is cleared; tokens keep working", async () => {
    const w = await world();
    const { browser, page } = await signedIn(w.account);
    const session = browser.cookies.get("__Host-account")!;
    const r = await browser.post("/account/sign-out", { csrf: field(page.text, "csrf") });
    expect(r.status).toBe(303);
    expect(browser.cookies.has("__Host-account")).toBe(false);
    expect(textOf((await browser.get("/account?notice=signed-out")).text)).toContain("You are signed out");
    expectProblem(await call("GET", "/auth/api-tokens", { token: session }), 401, "unauthorized");
    expect((await call("GET", "/v1/projects", { token: w.token })).status).toBe(200);
    // A form posted after the session ended asks to sign in again.
    const late = await browser.post("/account/tokens", creation(page.text));
    expect(late.status).toBe(401);
    expect(textOf(late.text)).toContain("Sign in again");
  });

  it("takes the web application's session cookie for nothing: the page has its own", async () => {
    const w = await world();
    const browser = new Browser();
    browser.cookies.set("session", await signIn(w.account));
    const r = await browser.get("/account");
    expect(r.text).toContain('action="/account/sign-in"');
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE account_id = ?").bind(w.account.id).first("n")).toBe(2);
  });
});
