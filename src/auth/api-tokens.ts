import { and, desc, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isUniqueViolation } from "../db/errors";
import { apiTokens } from "../db/schema";
import { readNearestThenPrimary } from "../db/sessions";
import type { Env } from "../env";
import { iso } from "../time";
import type { Scope } from "./scopes";
import { API_TOKEN_PREFIX, generateSecret, hashSecret } from "./secrets";

export const MAX_ACTIVE_TOKENS = 20;

type Row = typeof apiTokens.$inferSelect;
/** What the gate keeps of a token: a new one has spent nothing and has the limit it was made with. */
type Credits = { creditLimit: number | null; creditsUsed: number };
const toItem = (r: Row, credits: Credits) => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  lastUsedAt: r.lastUsedAt,
  creditLimit: credits.creditLimit,
  creditsUsed: credits.creditsUsed,
});

export type ApiTokenItem = ReturnType<typeof toItem>;
export type NewApiToken = { name: string; scopes: Scope[]; expiresAt: string; creditLimit?: number | null };
export type IssueOutcome = { kind: "created"; token: string; item: ApiTokenItem } | { kind: "limit_reached" } | { kind: "id_taken" };

/**
 * A new personal API token for the account; its secret is in this answer only. `id` is the new token's
 * id: a form that names it in advance is single-use, since sending it again finds the id taken.
 */
export async function issueApiToken(env: Env, accountId: string, input: NewApiToken, id: string = crypto.randomUUID()): Promise<IssueOutcome> {
  const token = generateSecret(API_TOKEN_PREFIX);
  const fields = { accountId, name: input.name, tokenHash: await hashSecret(token), prefix: token.slice(0, 12), scopes: input.scopes, expiresAt: input.expiresAt };
  const creditLimit = input.creditLimit ?? null;
  // The limit is in place before the token exists, so no task it sends runs unlimited; a gate left by a failed insert names no token.
  if (creditLimit !== null) await gateOf(env, fields.tokenHash).setCreditLimit(creditLimit);
  let row: Row | undefined;
  try {
    row = await insertTokenWithinLimit(env.DB, id, fields, iso(Date.now()));
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: "id_taken" };
    throw error;
  }
  return row ? { kind: "created", token, item: toItem(row, { creditLimit, creditsUsed: 0 }) } : { kind: "limit_reached" };
}

const gateOf = (env: Env, tokenHash: string) => env.TOKEN_GATE.getByName(tokenHash);

/** A token's record with what its gate keeps: its last use (D1's column holds only uses from before), its credit limit and spend. */
async function withStanding(env: Env, row: Row): Promise<ApiTokenItem> {
  const { lastUsedAt, creditLimit, creditsUsed } = await gateOf(env, row.tokenHash).standing(row.tokenHash);
  return toItem({ ...row, lastUsedAt: lastUsedAt === null ? row.lastUsedAt : iso(lastUsedAt) }, { creditLimit, creditsUsed });
}

/** The account's unrevoked tokens, newest first. */
export async function listApiTokens(env: Env, accountId: string): Promise<ApiTokenItem[]> {
  const rows = await listTokens(env.DB, accountId);
  return Promise.all(rows.map((r) => withStanding(env, r)));
}

/** Sets the credit limit (null: none) of one of the account's unrevoked tokens; undefined when it has no such token. Tasks dispatched after it returns are held to it. */
export async function setTokenCreditLimit(env: Env, accountId: string, id: string, creditLimit: number | null): Promise<ApiTokenItem | undefined> {
  const row = await findUnrevokedToken(env.DB, accountId, id);
  if (!row) return undefined;
  await gateOf(env, row.tokenHash).setCreditLimit(creditLimit);
  return withStanding(env, row);
}

/** Revokes one of the account's unrevoked tokens; false when it has no such token. The gate learns first, so the token stops working even if the D1 write fails. */
export async function revokeApiToken(env: Env, accountId: string, id: string): Promise<boolean> {
  const token = await findUnrevokedToken(env.DB, accountId, id);
  if (!token) return false;
  await env.TOKEN_GATE.getByName(token.tokenHash).revoke(token.tokenHash);
  await markRevoked(env.DB, id, iso(Date.now()));
  return true;
}

/**
 * Inserts the token only while the account has fewer than 20 active ones. One statement, so D1's
 * single writer makes the count and the insert atomic: parallel creations cannot overshoot.
 */
async function insertTokenWithinLimit(
  d1: D1Database,
  id: string,
  token: { accountId: string; name: string; tokenHash: string; prefix: string; scopes: Scope[]; expiresAt: string },
  now: string,
): Promise<Row | undefined> {
  const result = await d1
    .prepare(
      `INSERT INTO api_tokens (id, account_id, name, token_hash, prefix, scopes, created_at, expires_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
       WHERE (SELECT COUNT(*) FROM api_tokens WHERE account_id = ?2 AND revoked_at IS NULL AND expires_at > ?7) < ?9`,
    )
    .bind(id, token.accountId, token.name, token.tokenHash, token.prefix, JSON.stringify(token.scopes), now, token.expiresAt, MAX_ACTIVE_TOKENS)
    .run();
  if (result.meta.changes !== 1) return undefined;
  return { id, ...token, createdAt: now, revokedAt: null, lastUsedAt: null };
}

/** The account's unrevoked tokens, newest first, expired ones included. */
function listTokens(d1: D1Database, accountId: string) {
  return drizzle(d1)
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.accountId, accountId), isNull(apiTokens.revokedAt)))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
}

async function findUnrevokedToken(d1: D1Database, accountId: string, id: string) {
  const [row] = await drizzle(d1)
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.accountId, accountId), isNull(apiTokens.revokedAt)));
  return row;
}

async function markRevoked(d1: D1Database, id: string, now: string): Promise<void> {
  await drizzle(d1)
    .update(apiTokens)
    .set({ revokedAt: now })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)));
}

/** What the token gate needs to know about a token, read once per gate object (a replica first; a token made a moment ago is on the primary). */
export function findTokenByHash(d1: D1Database, tokenHash: string) {
  return readNearestThenPrimary(d1, async (db) => {
    const [row] = await drizzle(db)
      .select({ accountId: apiTokens.accountId, scopes: apiTokens.scopes, expiresAt: apiTokens.expiresAt, revokedAt: apiTokens.revokedAt })
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, tokenHash));
    return row;
  });
}
