import { and, asc, eq, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isUniqueViolation } from "../db/errors";
import { accounts, sessions } from "../db/schema";
import { hashPassword } from "./passwords";

export type AccountView = { id: string; email: string; credits: number };
const view = (a: AccountView): AccountView => ({ id: a.id, email: a.email, credits: a.credits });

/** A new account; null when the email is taken. */
export async function createAccount(d1: D1Database, input: { email: string; password: string; credits: number }): Promise<AccountView | null> {
  const row = { id: crypto.randomUUID(), email: input.email, passwordHash: await hashPassword(input.password), credits: input.credits, createdAt: new Date().toISOString() };
  try {
    await drizzle(d1).insert(accounts).values(row);
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
  return view(row);
}

/** The account after the change; null when there is no such account. */
export async function updateAccount(d1: D1Database, id: string, input: { credits?: number; password?: string }): Promise<AccountView | null> {
  const changes = {
    ...(input.credits === undefined ? {} : { credits: input.credits }),
    ...(input.password === undefined ? {} : { passwordHash: await hashPassword(input.password) }),
  };
  const db = drizzle(d1);
  const update = db.update(accounts).set(changes).where(eq(accounts.id, id)).returning();
  // A new password ends every session of the account in the same batch; API tokens stay valid.
  const [row] =
    input.password !== undefined
      ? (await db.batch([update, db.delete(sessions).where(eq(sessions.accountId, id))]))[0]
      : Object.keys(changes).length
        ? await update
        : await db.select().from(accounts).where(eq(accounts.id, id));
  return row ? view(row) : null;
}

/** Accounts in email order, after the given email (keyset paging), for operators looking up ids. */
export async function listAccounts(d1: D1Database, options: { email?: string; after?: string; limit: number }): Promise<AccountView[]> {
  const filter = options.email !== undefined ? eq(accounts.email, options.email) : options.after !== undefined ? gt(accounts.email, options.after) : undefined;
  const rows = await drizzle(d1).select().from(accounts).where(filter).orderBy(asc(accounts.email)).limit(options.limit);
  return rows.map(view);
}

export async function findAccountByEmail(d1: D1Database, email: string) {
  const [row] = await drizzle(d1).select().from(accounts).where(eq(accounts.email, email));
  return row;
}

// ---- sessions ----
const SESSION_LIFETIME_MS = 30 * 86_400_000;

export async function createSession(d1: D1Database, accountId: string, tokenHash: string, now: number) {
  const expiresAt = new Date(now + SESSION_LIFETIME_MS).toISOString();
  await drizzle(d1)
    .insert(sessions)
    .values({ id: crypto.randomUUID(), accountId, tokenHash, createdAt: new Date(now).toISOString(), expiresAt });
  return { expiresAt };
}

export async function findSessionAccount(d1: D1Database, tokenHash: string, now: number): Promise<string | undefined> {
  const [row] = await drizzle(d1)
    .select({ accountId: sessions.accountId })
    .from(sessions)
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, new Date(now).toISOString())));
  return row?.accountId;
}

/** Ends one session (sign-out). False when it had ended already. */
export async function endSession(d1: D1Database, tokenHash: string): Promise<boolean> {
  const ended = await drizzle(d1).delete(sessions).where(eq(sessions.tokenHash, tokenHash)).returning({ id: sessions.id });
  return ended.length > 0;
}
