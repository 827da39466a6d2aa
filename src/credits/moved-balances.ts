import { and, eq, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { accounts, creditCharges } from "../db/schema";
import { primary } from "../db/sessions";

export type BalanceToMove = { credits: number; charges: { taskId: string; amount: number; chargedAt: number }[] };

/**
 * What D1 held of an account's credits before balances moved to AccountLedger objects: the balance,
 * and the charges since `chargedSince`, so a task charged before the move is neither charged again
 * nor refunded short. Read from the primary, once per account. Undefined for an unknown account.
 */
export async function readBalanceToMove(d1: D1Database, accountId: string, chargedSince: number): Promise<BalanceToMove | undefined> {
  const db = drizzle(primary(d1));
  const [[account], charges] = await db.batch([
    db.select({ credits: accounts.credits }).from(accounts).where(eq(accounts.id, accountId)),
    db
      .select({ taskId: creditCharges.taskId, amount: creditCharges.amount, chargedAt: creditCharges.chargedAt })
      .from(creditCharges)
      .where(and(eq(creditCharges.accountId, accountId), gt(creditCharges.chargedAt, new Date(chargedSince).toISOString()))),
  ]);
  if (!account) return undefined;
  return { credits: account.credits, charges: charges.map((c) => ({ ...c, chargedAt: Date.parse(c.chargedAt) })) };
}
