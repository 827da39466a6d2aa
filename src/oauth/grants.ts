import type { AuthRequest, GrantSummary, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { SCOPES, type Scope } from "../auth/scopes";
import type { Env } from "../env";
import { iso } from "../time";
import { oauthApi } from "./authorization-server";

/**
 * A grant is known to the service by an id of its own (a UUID): it names the grant's TokenGate,
 * where its per-minute count, stream places, last use and revocation live, since the library's KV
 * records may be read from a cache for a minute after they change.
 */
export const grantGateName = (id: string) => `grant:${id}`;

/**
 * What the library keeps with a grant: props (encrypted, handed back with each access token: the account, the grant's id,
 * and whether its request named no resource, so it works at every resource) and metadata (listed).
 */
export type GrantProps = { accountId: string; grant: string; anyResource?: true };
export type GrantMetadata = { grant: string; clientName: string; connectedAt: number };

export type ConnectedApp = {
  id: string;
  clientId: string;
  clientName: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  creditLimit: number | null;
  creditsUsed: number;
};

const knownScopes = (scopes: string[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));
const gate = (env: Env, id: string) => env.TOKEN_GATE.getByName(grantGateName(id));

/**
 * Opens the gate of a grant about to be made, once per id: false when that id was used already
 * (the approval was replayed). A denial takes its id too (`scopes` null), so it cannot be replayed as an approval.
 */
export function claimGrantId(env: Env, id: string, accountId: string, scopes: Scope[] | null): Promise<boolean> {
  // No end of its own: the library ends the grant (a refresh token unused for 30 days), and its listing with it.
  return gate(env, id).enroll(grantGateName(id), scopes && { accountId, scopes, expiresAt: Number.MAX_SAFE_INTEGER });
}

/**
 * Makes the approved grant and its code, and answers where to send the browser. The library
 * replaces the account's earlier grants of the same client (for a metadata-document client, of the
 * same redirect URI); their gates are told too, so they stop at once rather than when KV catches up.
 */
export async function makeGrant(
  env: Env,
  api: OAuthHelpers,
  approved: { request: AuthRequest; accountId: string; id: string; clientName: string; scopes: Scope[]; anyResource: boolean },
): Promise<string> {
  const { request, accountId, id, scopes } = approved;
  const sameInstallation = (g: GrantSummary) => g.clientId === request.clientId && (!request.clientId.startsWith("https:") || g.redirectUri === request.redirectUri);
  const replaced = (await grantsOf(api, accountId)).filter(sameInstallation).flatMap((g) => idOf(g) ?? []);
  const props: GrantProps = { accountId, grant: id, ...(approved.anyResource ? { anyResource: true as const } : {}) };
  // In milliseconds: the library's own createdAt counts seconds, too coarse to order grants made in one.
  const metadata: GrantMetadata = { grant: id, clientName: approved.clientName, connectedAt: Date.now() };
  const { redirectTo } = await api.completeAuthorization({ request: { ...request, scope: scopes }, userId: accountId, metadata, scope: scopes, props });
  await Promise.all(replaced.map((old) => gate(env, old).revoke(grantGateName(old))));
  return redirectTo;
}

/** Every grant of the account the library holds, page by page. */
async function grantsOf(api: OAuthHelpers, accountId: string): Promise<GrantSummary[]> {
  const grants: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(accountId, { limit: 1000, cursor });
    grants.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return grants;
}

const idOf = (grant: GrantSummary): string | undefined => (grant.metadata as Partial<GrantMetadata> | null)?.grant;
const metadataOf = (grant: GrantSummary) => grant.metadata as GrantMetadata;

/** A grant as the account's list shows it, with what its gate keeps: whether it stands, its last use, its credit limit and spend. */
async function connectedApp(env: Env, g: GrantSummary): Promise<{ app: ConnectedApp; valid: boolean }> {
  const [id, name] = [idOf(g)!, grantGateName(idOf(g)!)];
  const [valid, { lastUsedAt, creditLimit, creditsUsed }] = await Promise.all([gate(env, id).isValid(name), gate(env, id).standing(name)]);
  const app = {
    id,
    clientId: g.clientId,
    clientName: metadataOf(g).clientName,
    scopes: knownScopes(g.scope),
    createdAt: iso(metadataOf(g).connectedAt),
    lastUsedAt: lastUsedAt === null ? null : iso(lastUsedAt),
    creditLimit,
    creditsUsed,
  };
  return { app, valid };
}

/** The account's connected apps, newest first; a grant revoked a moment ago is left out although KV may still list it. */
export async function listConnectedApps(env: Env, accountId: string): Promise<ConnectedApp[]> {
  const api = oauthApi(env);
  if (!api) return [];
  const grants = (await grantsOf(api, accountId)).filter((g) => idOf(g) !== undefined);
  const listed = await Promise.all(grants.map((g) => connectedApp(env, g)));
  return listed
    .filter(({ valid }) => valid)
    .map(({ app }) => app)
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
}

/** One of the account's grants the library holds, by our id (KV may still list one revoked a moment ago). */
async function grantNamed(api: OAuthHelpers, accountId: string, id: string): Promise<GrantSummary | undefined> {
  return (await grantsOf(api, accountId)).find((g) => idOf(g) === id);
}

/** Sets the credit limit (null: none) of one of the account's standing grants; undefined when it has none with this id. */
export async function setGrantCreditLimit(env: Env, accountId: string, id: string, creditLimit: number | null): Promise<ConnectedApp | undefined> {
  const api = oauthApi(env);
  const grant = api && (await grantNamed(api, accountId, id));
  if (!grant || !(await gate(env, id).isValid(grantGateName(id)))) return undefined;
  await gate(env, id).setCreditLimit(creditLimit);
  return (await connectedApp(env, grant)).app;
}

/**
 * Disconnects one of the account's apps: its gate refuses the grant's tokens from the next request
 * on, then the library deletes the grant and its tokens. False when the account has no such grant
 * standing (KV may list a revoked one for a minute: it is deleted again, harmlessly).
 */
export async function disconnectApp(env: Env, accountId: string, id: string): Promise<boolean> {
  const api = oauthApi(env);
  const grant = api && (await grantNamed(api, accountId, id));
  if (!api || !grant) return false;
  const name = grantGateName(id);
  const standing = await gate(env, id).isValid(name);
  await gate(env, id).revoke(name);
  await api.revokeGrant(grant.id, accountId);
  return standing;
}
