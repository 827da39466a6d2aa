import { and, desc, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { apiTokens } from "../db/schema";
import { readNearestThenPrimary } from "../db/sessions";
import type { Scope } from "./scopes";

export const MAX_ACTIVE_TOKENS = 20;

type Row = typeof apiTokens.$inferSelect;
export const toItem = (r: Row) => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  lastUsedAt: r.lastUsedAt,
});

/**
 * Inserts the token only while the account has fewer than 20 active ones. One statement, so D1's
 * single writer makes the count and the insert atomic: parallel creations cannot overshoot.
 */
export async function insertTokenWithinLimit(
  d1: D1Database,
  token: { accountId: string; name: string; tokenHash: string; prefix: string; scopes: Scope[]; expiresAt: string },
  now: string,
): Promise<Row | undefined> {
  const id = crypto.randomUUID();
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
export function listTokens(d1: D1Database, accountId: string) {
  return drizzle(d1)
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.accountId, accountId), isNull(apiTokens.revokedAt)))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
}

export async function findUnrevokedToken(d1: D1Database, accountId: string, id: string) {
  const [row] = await drizzle(d1)
    .select({ tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.accountId, accountId), isNull(apiTokens.revokedAt)));
  return row;
}

export async function markRevoked(d1: D1Database, id: string, now: string): Promise<void> {
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
