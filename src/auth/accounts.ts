import { and, asc, eq, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isUniqueViolation } from "../db/errors";
import { accounts, sessions } from "../db/schema";
import { hashPassword } from "./passwords";
import { DAY_MS, iso } from "../time";

/** An account as operators see it in D1; its balance lives in its AccountLedger object. */
export type AccountRecord = { id: string; email: string };
const record = (a: AccountRecord): AccountRecord => ({ id: a.id, email: a.email });

/**
 * A new account; null when the email is taken. Its opening balance is also kept in D1, which its
 * ledger reads should it start before it was opened.
 */
export async function createAccount(d1: D1Database, input: { email: string; password: string; credits: number }): Promise<AccountRecord | null> {
  const row = { id: crypto.randomUUID(), email: input.email, passwordHash: await hashPassword(input.password), credits: input.credits, createdAt: iso(Date.now()) };
  try {
    await drizzle(d1).insert(accounts).values(row);
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
  return record(row);
}

/** The account, or null when there is no such account. */
export async function findAccount(d1: D1Database, id: string): Promise<AccountRecord | null> {
  const [row] = await drizzle(d1).select({ id: accounts.id, email: accounts.email }).from(accounts).where(eq(accounts.id, id));
  return row ?? null;
}

/** Sets a new password and ends every session of the account in the same batch (API tokens stay valid); null when there is no such account. */
export async function setPassword(d1: D1Database, id: string, password: string): Promise<AccountRecord | null> {
  const db = drizzle(d1);
  const [[row]] = await db.batch([
    db
      .update(accounts)
      .set({ passwordHash: await hashPassword(password) })
      .where(eq(accounts.id, id))
      .returning({ id: accounts.id, email: accounts.email }),
    db.delete(sessions).where(eq(sessions.accountId, id)),
  ]);
  return row ?? null;
}

/** Accounts in email order, after the given email (keyset paging), for operators looking up ids. */
export async function listAccounts(d1: D1Database, options: { email?: string; after?: string; limit: number }): Promise<AccountRecord[]> {
  const filter = options.email !== undefined ? eq(accounts.email, options.email) : options.after !== undefined ? gt(accounts.email, options.after) : undefined;
  const rows = await drizzle(d1).select({ id: accounts.id, email: accounts.email }).from(accounts).where(filter).orderBy(asc(accounts.email)).limit(options.limit);
  return rows.map(record);
}

export async function findAccountByEmail(d1: D1Database, email: string) {
  const [row] = await drizzle(d1).select().from(accounts).where(eq(accounts.email, email));
  return row;
}

// ---- sessions ----
const SESSION_LIFETIME_MS = 30 * DAY_MS;

export async function createSession(d1: D1Database, accountId: string, tokenHash: string, now: number) {
  const expiresAt = iso(now + SESSION_LIFETIME_MS);
  await drizzle(d1)
    .insert(sessions)
    .values({ id: crypto.randomUUID(), accountId, tokenHash, createdAt: iso(now), expiresAt });
  return { expiresAt };
}

export async function findSessionAccount(d1: D1Database, tokenHash: string, now: number): Promise<string | undefined> {
  const [row] = await drizzle(d1)
    .select({ accountId: sessions.accountId })
    .from(sessions)
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, iso(now))));
  return row?.accountId;
}

/** Ends one session (sign-out). False when it had ended already. */
export async function endSession(d1: D1Database, tokenHash: string): Promise<boolean> {
  const ended = await drizzle(d1).delete(sessions).where(eq(sessions.tokenHash, tokenHash)).returning({ id: sessions.id });
  return ended.length > 0;
}
