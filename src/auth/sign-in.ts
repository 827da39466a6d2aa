import type { Env } from "../env";
import { createSession, findAccountByEmail } from "./accounts";
import { verifyPassword } from "./passwords";
import { normaliseEmail } from "./schemas";
import { generateSecret, hashSecret, SESSION_PREFIX } from "./secrets";
import { signInThrottleFor } from "./sign-in-throttle";

export type SignInOutcome = { kind: "signed_in"; accountId: string; token: string; expiresAt: string } | { kind: "wrong" } | { kind: "limited"; retryAfterSeconds: number };

/**
 * Checks an email and password under the sign-in throttle and opens a fresh account session: the
 * one way in, for POST /auth/token and the service's own pages alike. The slot is claimed before the
 * password is checked, so parallel guesses cannot outrun the count; an unknown email still runs the
 * hash, so both failures look and take the same.
 */
export async function signIn(env: Env, input: { email: string; password: string }, clientAddress: string | undefined): Promise<SignInOutcome> {
  const email = normaliseEmail(input.email);
  const throttle = await signInThrottleFor(env, email, clientAddress);
  const reservation = await throttle.reserve();
  if (reservation.kind === "limited") return reservation;
  const account = await findAccountByEmail(env.DB, email);
  const valid = await verifyPassword(input.password, account?.passwordHash);
  await throttle.settle(reservation.attempt, Boolean(account && valid));
  if (!account || !valid) return { kind: "wrong" };
  const token = generateSecret(SESSION_PREFIX);
  const { expiresAt } = await createSession(env.DB, account.id, await hashSecret(token), Date.now());
  return { kind: "signed_in", accountId: account.id, token, expiresAt };
}
