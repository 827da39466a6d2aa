import {
  type AuthRequest,
  AuthorizationError,
  type AuthorizationErrorCode,
  authorizationErrorRedirect,
  CimdFetchError,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { findAccount } from "../auth/accounts";
import { SCOPES, type Scope } from "../auth/scopes";
import { limitBody } from "../http/middleware";
import { type PageEnv, pageSecurity, plainPagePolicy } from "../http/page-security";
import { notFound } from "../http/problem";
import { createRouter } from "../http/router";
import { formToken, formTokenValid, signInFormToken } from "../pages/form-token";
import { Message, renderPage } from "../pages/layout";
import { pageSession, type PageSession } from "../pages/session";
import { SignInForm, signInFromForm } from "../pages/sign-in-form";
import { firstCharacters } from "../text";
import { AUTHORIZE_PATH, oauthRoles, type OAuthRoles } from "./authorization-server";
import { isClientIdUrl, lookUpClientDocument } from "./client-metadata";
import { type ClientShown, ConsentScreen } from "./consent-page";
import { claimGrantId, makeGrant } from "./grants";

// How long a consent form may wait for its answer; the code it leads to then has 10 minutes of its own.
const CONSENT_FORM_MS = 30 * 60_000;
const FORM_BODY_LIMIT = 64 * 1024;

type Understood = { kind: "request"; request: AuthRequest; scopes: Scope[] } | { kind: "answer"; response: Response };

const errorPage = (c: Context<PageEnv>, status: 400 | 409 | 429, message: string) =>
  renderPage(
    c,
    status,
    "This authorization cannot go on",
    <>
      <h1>This authorization cannot go on</h1>
      <Message text={message} problem />
      <p>Go back to the app you were connecting and start connecting again.</p>
    </>,
  );

/** What a grant gets: the scopes asked that this server has (none asked: both); null when every scope asked is unknown. */
function scopesToGrant(asked: string[]): Scope[] | null {
  if (asked.length === 0) return [...SCOPES];
  const known = SCOPES.filter((s) => asked.includes(s));
  return known.length > 0 ? known : null;
}

/**
 * The authorization request in this URL, as the library validates it (client, exact redirect URI,
 * response type, resource, PKCE), plus what the contract asks beyond it: S256 PKCE from every
 * client, confidential ones too, and at least one scope this server has. A client or redirect URI
 * that does not match is an error page here, never a redirect; anything wrong after that goes
 * back to the client as an OAuth error.
 */
async function understand(c: Context<PageEnv>, roles: OAuthRoles, api: OAuthHelpers): Promise<Understood> {
  const clientId = new URL(c.req.url).searchParams.get("client_id");
  // A metadata-document client is looked up under the outbound rules before the library sees it: a refusal fetches nothing.
  if (clientId && isClientIdUrl(clientId)) {
    const lookup = await lookUpClientDocument(c.env, clientId, c.req.header("cf-connecting-ip"));
    if (lookup.kind === "limited")
      return { kind: "answer", response: await errorPage(c, 429, `Too many apps were looked up from your address; try again in ${lookup.retryAfterSeconds} s.`) };
    if (lookup.kind === "refused")
      return { kind: "answer", response: await errorPage(c, 400, "The app's client id is not an https address on a public domain name, so this server does not fetch it.") };
    if (lookup.kind === "failed") return { kind: "answer", response: await errorPage(c, 400, "The app's metadata document could not be fetched or is not valid.") };
  }
  let request: AuthRequest;
  try {
    request = await api.parseAuthRequest(new Request(`${roles.issuer}${AUTHORIZE_PATH}${new URL(c.req.url).search}`));
  } catch (error) {
    if (error instanceof AuthorizationError && error.redirectTo) return { kind: "answer", response: c.redirect(error.redirectTo, 303) };
    if (error instanceof AuthorizationError) return { kind: "answer", response: await errorPage(c, 400, `The app's request is not valid: ${error.description}`) };
    if (error instanceof CimdFetchError) return { kind: "answer", response: await errorPage(c, 400, "The app's metadata document could not be fetched or is not valid.") };
    throw error;
  }
  const refuse = (code: AuthorizationErrorCode, description: string): Understood => ({
    kind: "answer",
    response: c.redirect(authorizationErrorRedirect(request, code, description), 303),
  });
  if (!request.codeChallenge || request.codeChallengeMethod !== "S256") return refuse("invalid_request", "PKCE with code_challenge_method S256 is required.");
  const scopes = scopesToGrant(request.scope);
  if (!scopes) return refuse("invalid_scope", `This server grants ${SCOPES.join(" and ")}.`);
  return { kind: "request", request, scopes };
}

/** The client as the consent page shows it and the grant keeps it: its name cut to 100 characters, or a metadata document's domain. */
async function clientShown(api: OAuthHelpers, request: AuthRequest): Promise<ClientShown> {
  const described = await api.describeConsent(request);
  const name = described.clientDomain ?? firstCharacters(described.clientName.trim(), 100);
  return { name, verifiedDomain: described.clientDomain, redirectHost: described.redirectHost, redirectIsLoopback: described.redirectIsLoopback };
}

const formAction = (c: Context<PageEnv>) => `${AUTHORIZE_PATH}${new URL(c.req.url).search}`;
// Bound to this account's session and to this very authorization request (its whole query), once per nonce.
const consentPurpose = (c: Context<PageEnv>, nonce: string, issued: string) => `consent\n${nonce}\n${issued}\n${new URL(c.req.url).search}`;

async function signInPage(c: Context<PageEnv>, client: ClientShown, problem?: { status: 400 | 401 | 429; message: string; email: string }) {
  return renderPage(
    c,
    problem?.status ?? 200,
    "Sign in to connect an app",
    <>
      <h1>Sign in to connect {client.name}</h1>
      <p>An app asks to act for you in Project Chat. Sign in first; you will then see what it asks for, and approve or deny.</p>
      <SignInForm action={formAction(c)} csrf={signInFormToken(c)} email={problem?.email} problem={problem?.message} hidden={{ step: "sign-in" }} />
    </>,
  );
}

async function consentPage(c: Context<PageEnv>, session: PageSession, client: ClientShown, scopes: Scope[]) {
  const account = await findAccount(c.env.DB, session.accountId);
  const [nonce, issued] = [crypto.randomUUID(), String(Date.now())];
  const form = { action: formAction(c), nonce, issued, csrf: await formToken(session, consentPurpose(c, nonce, issued)) };
  return renderPage(c, 200, `Connect ${client.name}`, <ConsentScreen client={client} scopes={scopes} email={account?.email ?? ""} form={form} />);
}

/** A posted consent form: this session's token for this request, fresh, used once; then the grant, or the client told access_denied. */
async function decide(c: Context<PageEnv>, api: OAuthHelpers, session: PageSession, understood: { request: AuthRequest; scopes: Scope[] }, form: Record<string, unknown>) {
  const [nonce, issued, decision] = [String(form.nonce ?? ""), String(form.issued ?? ""), form.decision];
  if (!/^[0-9a-f-]{36}$/.test(nonce) || !(await formTokenValid(session, consentPurpose(c, nonce, issued), form.csrf))) {
    return errorPage(c, 400, "This approval form was not made for this sign-in and this request. Nothing was approved.");
  }
  if (Date.now() - Number(issued) > CONSENT_FORM_MS) return errorPage(c, 400, "This approval form has expired. Nothing was approved.");
  const approve = decision === "approve";
  if (!approve && decision !== "deny") return errorPage(c, 400, "Choose Approve or Deny.");
  if (!(await claimGrantId(c.env, nonce, session.accountId, approve ? understood.scopes : null))) {
    return errorPage(c, 409, "This approval form has been used already.");
  }
  if (!approve) return c.redirect(authorizationErrorRedirect(understood.request, "access_denied", "The person denied access."), 303);
  const client = await clientShown(api, understood.request);
  // The library binds a request that names no resource to /mcp; such a grant is also taken at /a2a (resource-credentials.ts).
  const anyResource = !new URL(c.req.url).searchParams.has("resource");
  const redirectTo = await makeGrant(c.env, api, { ...understood, accountId: session.accountId, id: nonce, clientName: client.name, anyResource });
  return c.redirect(redirectTo, 303);
}

/**
 * `/oauth/authorize`: the page a connector sends a person to. Signed out, a sign-in form; signed in,
 * the consent screen. Both forms post back to this same URL, so the request they answer is the one
 * in the address bar, validated again, and signing in only ever returns here.
 */
export const authorizeRoutes = createRouter<PageEnv>();
// Not form-action 'self': browsers apply it to the redirect back to the client that answers the consent form.
authorizeRoutes.use("*", pageSecurity(plainPagePolicy(null)));

async function withRequest(c: Context<PageEnv>, then: (api: OAuthHelpers, understood: { request: AuthRequest; scopes: Scope[] }) => Promise<Response>) {
  const roles = oauthRoles(c.env);
  const api = roles?.server.getOAuthApi(c.env);
  if (!roles || !api) throw notFound("OAuth is not set up on this deployment (PUBLIC_URL is unset).");
  const understood = await understand(c, roles, api);
  return understood.kind === "answer" ? understood.response : then(api, understood);
}

authorizeRoutes.get("/", (c) =>
  withRequest(c, async (api, understood) => {
    const [session, client] = await Promise.all([pageSession(c), clientShown(api, understood.request)]);
    return session ? consentPage(c, session, client, understood.scopes) : signInPage(c, client);
  }),
);

authorizeRoutes.post("/", limitBody(FORM_BODY_LIMIT), (c) =>
  withRequest(c, async (api, understood) => {
    const form = await c.req.parseBody();
    if (form.step === "sign-in") {
      const outcome = await signInFromForm(c, form);
      if (outcome.kind === "signed_in") return c.redirect(formAction(c), 303);
      return signInPage(c, await clientShown(api, understood.request), outcome);
    }
    const session = await pageSession(c);
    if (!session) return signInPage(c, await clientShown(api, understood.request), { status: 401, message: "You were signed out. Sign in again.", email: "" });
    return decide(c, api, session, understood, form);
  }),
);
