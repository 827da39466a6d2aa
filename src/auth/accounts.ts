import { and, asc, eq, gt, lte } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { isUniqueViolation } from "../db/errors";
import { accounts, sessions, signInFailures } from "../db/schema";
import { ApiError } from "../http/problem";
import { hashPassword } from "./passwords";

export type AccountView = { id: string; email: string; credits: number };
const view = (a: AccountView): AccountView => ({ id: a.id, email: a.email, credits: a.credits });


export async function createAccount(d1: D1Database, input: { email: string; password: string; credits: number }): Promise<AccountView> {
  const row = { id: crypto.randomUUID(), email: input.email, passwordHash: await hashPassword(input.password), credits: input.credits, createdAt: new Date().toISOString() };
  try {
    await drizzle(d1).insert(accounts).values(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError(409, "conflict", "An account with this email already exists.");
    throw error;
  }
  return view(row);
}

export async function updateAccount(d1: D1Database, id: string, input: { credits?: number; password?: string }): Promise<AccountView> {
  const changes = {
    ...(input.credits === undefined ? {} : { credits: input.credits }),
    ...(input.password === undefined ? {} : { passwordHash: await hashPassword(input.password) }),
  };
  const db = drizzle(d1);
  const [row] = Object.keys(changes).length
    ? await db.update(accounts).set(changes).where(eq(accounts.id, id)).returning()
    : await db.select().from(accounts).where(eq(accounts.id, id));
  if (!row) throw new ApiError(404, "not_found", "No account has this id.");
  return view(row);
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

// ---- sign-in throttling: 10 failures per email in 15 minutes ----
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_MAX_FAILURES = 10;

/** Seconds until sign-in for this email may be tried again, or 0 when it may be tried now. */
export async function signInRetryAfter(d1: D1Database, email: string, now: number): Promise<number> {
  const recent = await drizzle(d1)
    .select({ failedAt: signInFailures.failedAt })
    .from(signInFailures)
    .where(and(eq(signInFailures.email, email), gt(signInFailures.failedAt, now - SIGN_IN_WINDOW_MS)))
    .orderBy(signInFailures.failedAt);
  if (recent.length < SIGN_IN_MAX_FAILURES) return 0;
  const freesAt = recent[recent.length - SIGN_IN_MAX_FAILURES]!.failedAt + SIGN_IN_WINDOW_MS;
  return Math.max(1, Math.ceil((freesAt - now) / 1000));
}

export async function recordSignInFailure(d1: D1Database, email: string, now: number): Promise<void> {
  const db = drizzle(d1);
  await db.batch([
    db.insert(signInFailures).values({ email, failedAt: now }),
    db.delete(signInFailures).where(lte(signInFailures.failedAt, now - SIGN_IN_WINDOW_MS)),
  ]);
}

export async function clearSignInFailures(d1: D1Database, email: string): Promise<void> {
  await drizzle(d1).delete(signInFailures).where(eq(signInFailures.email, email));
}

// ---- sessions ----
export const SESSION_LIFETIME_MS = 30 * 86_400_000;

export async function createSession(d1: D1Database, accountId: string, tokenHash: string, now: number) {
  const expiresAt = new Date(now + SESSION_LIFETIME_MS).toISOString();
  await drizzle(d1).insert(sessions).values({ id: crypto.randomUUID(), accountId, tokenHash, createdAt: new Date(now).toISOString(), expiresAt });
  return { expiresAt };
}

export async function findSessionAccount(d1: D1Database, tokenHash: string, now: number): Promise<string | undefined> {
  const [row] = await drizzle(d1)
    .select({ accountId: sessions.accountId })
    .from(sessions)
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, new Date(now).toISOString())));
  return row?.accountId;
}
