import type { Context } from "hono";
import { findAccount } from "../auth/accounts";
import { issueApiToken, listApiTokens, MAX_ACTIVE_TOKENS, revokeApiToken, setTokenCreditLimit } from "../auth/api-tokens";
import { CreateApiTokenRequest, SetCreditLimitRequest } from "../auth/schemas";
import { limitBody } from "../http/middleware";
import { type PageEnv, pageSecurity, plainPagePolicy } from "../http/page-security";
import { createRouter } from "../http/router";
import { disconnectApp, listConnectedApps, setGrantCreditLimit } from "../oauth/grants";
import { formToken, formTokenValid, signInFormToken } from "../pages/form-token";
import { renderPage } from "../pages/layout";
import { endPageSession, pageSession, type PageSession } from "../pages/session";
import { SignInForm, signInFromForm } from "../pages/sign-in-form";
import { memberProjects } from "../projects/store";
import { DAY_MS } from "../time";
import { type AccountForms, AccountPage, type AccountView, TOKEN_DAYS } from "./account-page";

const PATH = "/account";
const STATEMENT_ENTRIES = 10;

// Messages a redirect back to the page may name: fixed sentences, never text from the request.
const NOTICES: Record<string, string> = {
  "signed-out": "You are signed out. Your tokens and connected apps keep working.",
  "token-revoked": "The token is revoked: requests with it are refused from now on.",
  "app-revoked": "The app is disconnected: its access stopped at once.",
  "limit-set": "The credit limit is set: it holds for tasks that start from now on.",
};

type PageMessage = { text: string; problem: boolean };
type Status = 200 | 400 | 401 | 404 | 409 | 429;

// What each form does, which its CSRF token is bound to (with the session).
const purposes = {
  signOut: "account:sign-out",
  create: (nonce: string) => `account:create-token\n${nonce}`,
  revokeToken: (id: string) => `account:revoke-token\n${id}`,
  revokeApp: (id: string) => `account:revoke-app\n${id}`,
  limitToken: (id: string) => `account:limit-token\n${id}`,
  limitApp: (id: string) => `account:limit-app\n${id}`,
};

async function viewOf(c: Context<PageEnv>, accountId: string): Promise<AccountView> {
  const [account, page, projects, tokens, apps] = await Promise.all([
    findAccount(c.env.DB, accountId),
    c.env.ACCOUNT_LEDGER.getByName(accountId).statementPage(accountId, STATEMENT_ENTRIES),
    memberProjects(c.env.DB, accountId),
    listApiTokens(c.env, accountId),
    listConnectedApps(c.env, accountId),
  ]);
  const names = new Map(projects.map((p) => [p.id, p.name]));
  const statement = (page?.items ?? []).map((entry) => ({ ...entry, projectName: entry.projectId ? (names.get(entry.projectId) ?? null) : null }));
  return { email: account?.email ?? "", balance: page?.balance ?? null, statement, tokens, apps };
}

async function formsFor(session: PageSession, view: AccountView): Promise<AccountForms> {
  const nonce = crypto.randomUUID();
  const tokenFor = (purpose: string) => formToken(session, purpose);
  // Each row's form token, by the row's id.
  const pairs = async (rows: { id: string }[], purpose: (id: string) => string) =>
    new Map(await Promise.all(rows.map(async ({ id }) => [id, await tokenFor(purpose(id))] as const)));
  return {
    signOut: await tokenFor(purposes.signOut),
    create: { nonce, csrf: await tokenFor(purposes.create(nonce)) },
    revokeToken: await pairs(view.tokens, purposes.revokeToken),
    revokeApp: await pairs(view.apps, purposes.revokeApp),
    limitToken: await pairs(view.tokens, purposes.limitToken),
    limitApp: await pairs(view.apps, purposes.limitApp),
  };
}

/** The signed-in page, as it stands after whatever this request did. */
async function accountPage(c: Context<PageEnv>, session: PageSession, status: Status, message?: PageMessage, secret?: { value: string; name: string }) {
  const view = await viewOf(c, session.accountId);
  const forms = await formsFor(session, view);
  return renderPage(c, status, "Your account", <AccountPage view={view} forms={forms} message={message} secret={secret} />);
}

function signInPage(c: Context<PageEnv>, status: Status, problem?: string, email?: string, notice?: string) {
  return renderPage(
    c,
    status,
    "Sign in to your account",
    <>
      <h1>Your account</h1>
      {notice ? <p class="message">{notice}</p> : null}
      <p>Sign in to see your credits, create and revoke API tokens, and disconnect apps.</p>
      <SignInForm action={`${PATH}/sign-in`} csrf={signInFormToken(c)} email={email} problem={problem} />
    </>,
  );
}

/** Runs a signed-in form's action once its CSRF token is this session's for that purpose; otherwise says why on the page. */
async function signedInPost(
  c: Context<PageEnv>,
  purpose: (form: Record<string, unknown>) => string,
  act: (session: PageSession, form: Record<string, unknown>) => Promise<Response>,
) {
  const session = await pageSession(c);
  if (!session) return signInPage(c, 401, "Your session has ended. Sign in again.");
  const form = await c.req.parseBody({ all: true });
  if (!(await formTokenValid(session, purpose(form), form.csrf))) {
    return accountPage(c, session, 400, { text: "This form has expired (or came from another site): nothing was done. Try again from this page.", problem: true });
  }
  return act(session, form);
}

/** A new token from the creation form: the same rules as POST /auth/api-tokens, the expiry chosen among a few lifetimes. */
function tokenInput(form: Record<string, unknown>) {
  const scopes = ([] as unknown[]).concat(form.scope ?? []);
  const days = Number(form.days);
  if (!TOKEN_DAYS.includes(days as (typeof TOKEN_DAYS)[number])) return { problem: "Choose when the token expires." };
  const parsed = CreateApiTokenRequest.safeParse({ name: form.name, scopes, expiresAt: new Date(Date.now() + days * DAY_MS).toISOString() });
  if (parsed.success) return { input: parsed.data };
  const fields = new Set(parsed.error.issues.map((issue) => String(issue.path[0])));
  if (fields.has("name")) return { problem: "Give the token a name of 1 to 100 characters." };
  return { problem: "Choose at least one scope." };
}

/**
 * The account page at /account: server-rendered, no script, its own cookie. Every form posts here
 * (same origin) with a CSRF token bound to the session; token creation's is single-use, so sending
 * the page that shows a secret again makes no second token.
 */
export const accountRoutes = createRouter<PageEnv>();
accountRoutes.use("*", pageSecurity(plainPagePolicy("'self'")));
accountRoutes.use("*", limitBody(64 * 1024));

accountRoutes.get("/", async (c) => {
  const session = await pageSession(c);
  const notice = NOTICES[c.req.query("notice") ?? ""];
  if (!session) return signInPage(c, 200, undefined, undefined, notice);
  return accountPage(c, session, 200, notice ? { text: notice, problem: false } : undefined);
});

accountRoutes.post("/sign-in", async (c) => {
  const form = await c.req.parseBody();
  const outcome = await signInFromForm(c, form);
  if (outcome.kind === "signed_in") return c.redirect(PATH, 303);
  return signInPage(c, outcome.status, outcome.message, outcome.email);
});

accountRoutes.post("/sign-out", (c) =>
  signedInPost(
    c,
    () => purposes.signOut,
    async (session) => {
      await endPageSession(c, session);
      return c.redirect(`${PATH}?notice=signed-out`, 303);
    },
  ),
);

accountRoutes.post("/tokens", (c) =>
  signedInPost(
    c,
    (form) => purposes.create(String(form.nonce ?? "")),
    async (session, form) => {
      const { input, problem } = tokenInput(form);
      if (!input) return accountPage(c, session, 400, { text: problem, problem: true });
      // The form's nonce becomes the token's id: a second send of the same form finds it taken.
      const nonce = String(form.nonce);
      if (!/^[0-9a-f-]{36}$/.test(nonce)) return accountPage(c, session, 400, { text: "This form is not one this page made.", problem: true });
      const outcome = await issueApiToken(c.env, session.accountId, input, nonce);
      if (outcome.kind === "id_taken") {
        return accountPage(c, session, 409, { text: "This form was sent already: its token is in the list (its secret is not shown again).", problem: true });
      }
      if (outcome.kind === "limit_reached") {
        return accountPage(c, session, 409, { text: `You have ${MAX_ACTIVE_TOKENS} active tokens, the most an account may have. Revoke one first.`, problem: true });
      }
      return accountPage(c, session, 200, undefined, { value: outcome.token, name: outcome.item.name });
    },
  ),
);

accountRoutes.post("/tokens/:id/revoke", (c) =>
  signedInPost(
    c,
    () => purposes.revokeToken(c.req.param("id")),
    async (session) => {
      if (!(await revokeApiToken(c.env, session.accountId, c.req.param("id")))) return accountPage(c, session, 404, { text: "There is no such token to revoke.", problem: true });
      return c.redirect(`${PATH}?notice=token-revoked`, 303);
    },
  ),
);

accountRoutes.post("/apps/:id/revoke", (c) =>
  signedInPost(
    c,
    () => purposes.revokeApp(c.req.param("id")),
    async (session) => {
      if (!(await disconnectApp(c.env, session.accountId, c.req.param("id")))) return accountPage(c, session, 404, { text: "There is no such app to disconnect.", problem: true });
      return c.redirect(`${PATH}?notice=app-revoked`, 303);
    },
  ),
);

/** A credit limit from a form: empty for none, else the same rule as PATCH /auth/api-tokens/{id}. */
function creditLimitOf(form: Record<string, unknown>): { creditLimit: number | null } | undefined {
  const raw = String(form.creditLimit ?? "").trim();
  const parsed = SetCreditLimitRequest.safeParse({ creditLimit: raw === "" ? null : Number(raw) });
  return parsed.success ? parsed.data : undefined;
}

const INVALID_LIMIT = "A credit limit is a whole number from 1 to 1000000000, or empty for no limit.";

/** A row's limit form: the credential's own setter, under the same rule for tokens and apps. */
const limitForm = (purpose: (id: string) => string, set: typeof setTokenCreditLimit | typeof setGrantCreditLimit, missing: string) => (c: Context<PageEnv, "/:id/limit">) =>
  signedInPost(
    c,
    () => purpose(c.req.param("id")),
    async (session, form) => {
      const limit = creditLimitOf(form);
      if (!limit) return accountPage(c, session, 400, { text: INVALID_LIMIT, problem: true });
      if (!(await set(c.env, session.accountId, c.req.param("id"), limit.creditLimit))) return accountPage(c, session, 404, { text: missing, problem: true });
      return c.redirect(`${PATH}?notice=limit-set`, 303);
    },
  );

accountRoutes.post("/tokens/:id/limit", limitForm(purposes.limitToken, setTokenCreditLimit, "There is no such token."));
accountRoutes.post("/apps/:id/limit", limitForm(purposes.limitApp, setGrantCreditLimit, "There is no such app."));
