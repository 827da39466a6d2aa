import type { ApiCaller } from "../auth/gate";
import { config } from "../config";
import type { Env } from "../env";
import { invalidRequest } from "../http/problem";
import type { ProjectAccess } from "../projects/access";
import { DAY_MS } from "../time";
import { dayOf } from "./project-usage";

// The default range is 30 days ending today; a range may span at most 365 days after its first.
const DEFAULT_DAYS_BACK = 29;
const RANGE_MAX_DAYS = 365;

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOf = (day: number) => dayOf(day * DAY_MS);

/** Whether a task can run now, what it costs, and (for the owner) the paying balance, as the caller's role may see them. */
export async function projectCredits(env: Env, access: ProjectAccess, caller: ApiCaller) {
  const payer = access.project.value.ownerAccountId;
  const [owed, standing] = await Promise.all([env.ACCOUNT_LEDGER.getByName(payer).balance(payer), env.TOKEN_GATE.getByName(caller.gateName).creditStanding()]);
  // An owner whose ledger cannot start (no such account) has nothing to spend.
  const balance = owed ?? 0;
  const taskCost = config(env).taskCreditCost;
  const { creditLimit, creditsUsed } = standing;
  const credentialCanPay = creditLimit === null || creditLimit - creditsUsed >= taskCost;
  return { balance: access.role === "owner" ? balance : null, taskCost, canRun: balance >= taskCost && credentialCanPay, credential: { creditLimit, creditsUsed } };
}

/** The project's ended tasks per UTC day, from and to inclusive (by default the 30 days ending today); 400 for a range out of bounds. */
export async function projectUsage(env: Env, access: ProjectAccess, range: { from?: string; to?: string }) {
  const to = range.to ? dayNumber(range.to) : Math.floor(Date.now() / DAY_MS);
  const from = range.from ? dayNumber(range.from) : to - DEFAULT_DAYS_BACK;
  if (from > to) throw invalidRequest("from must not be after to.", [{ path: "from", message: `after to (${dateOf(to)})` }]);
  if (to - from > RANGE_MAX_DAYS)
    throw invalidRequest(`to may be at most ${RANGE_MAX_DAYS} days after from.`, [{ path: "to", message: `more than ${RANGE_MAX_DAYS} days after from` }]);
  return { items: await env.PROJECT_CHATS.getByName(access.projectId).usageDays(dateOf(from), dateOf(to)) };
}
