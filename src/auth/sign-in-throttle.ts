import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { sha256Hex } from "../crypto";
import { throttledAddress } from "./client-address";

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
const SIGN_IN_MAX_FAILURES = 10;

export type Reservation = { kind: "reserved"; attempt: number } | { kind: "limited"; retryAfterSeconds: number };

/**
 * One object per email and client address. It counts sign-in attempts that failed, or are still
 * being checked, over 15 minutes. An attempt takes its slot before the password is checked, in
 * one synchronous stretch, so however many run in parallel at most 10 are checked per window.
 * The same counting bounds OAuth client registrations per address (`registrationThrottleFor`).
 */
export class SignInThrottle extends DurableObject<Env> {
  private schemaReady = false;

  /** Takes a slot for one password check (or one registration, of which `max` are allowed), or says when one frees up. */
  async reserve(max = SIGN_IN_MAX_FAILURES): Promise<Reservation> {
    const now = Date.now();
    const sql = this.ensureSchema();
    // From here to the insert there is no await: nothing interleaves between count and claim.
    sql.exec("DELETE FROM attempts WHERE at <= ?", now - SIGN_IN_WINDOW_MS);
    const times = sql
      .exec<{ at: number }>("SELECT at FROM attempts ORDER BY at")
      .toArray()
      .map((r) => r.at);
    if (times.length >= max) {
      const freesAt = times[times.length - max]! + SIGN_IN_WINDOW_MS;
      return { kind: "limited", retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now) / 1000)) };
    }
    const { id } = sql.exec<{ id: number }>("INSERT INTO attempts (at) VALUES (?) RETURNING id", now).one();
    // Storage is dropped once the window has passed with nothing in it.
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(now + SIGN_IN_WINDOW_MS);
    return { kind: "reserved", attempt: id };
  }

  /** A failed check stays counted; a successful one frees its slot and clears the failures settled so far. */
  async settle(attempt: number, succeeded: boolean): Promise<void> {
    const sql = this.ensureSchema();
    if (succeeded) sql.exec("DELETE FROM attempts WHERE id = ? OR settled = 1", attempt);
    else sql.exec("UPDATE attempts SET settled = 1 WHERE id = ?", attempt);
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const sql = this.ensureSchema();
    sql.exec("DELETE FROM attempts WHERE at <= ?", now - SIGN_IN_WINDOW_MS);
    const oldest = sql.exec<{ at: number | null }>("SELECT MIN(at) AS at FROM attempts").one().at;
    if (oldest === null) {
      await this.ctx.storage.deleteAll();
      this.schemaReady = false;
    } else {
      await this.ctx.storage.setAlarm(oldest + SIGN_IN_WINDOW_MS);
    }
  }

  private ensureSchema(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.schemaReady) {
      // An attempt is counted from its reservation; settled = 1 once its check has failed.
      sql.exec("CREATE TABLE IF NOT EXISTS attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, settled INTEGER NOT NULL DEFAULT 0)");
      this.schemaReady = true;
    }
    return sql;
  }
}

// Named by a hash, so emails and addresses do not appear in object names.
const throttleNamed = async (env: Env, key: string) => env.SIGN_IN_THROTTLE.getByName(await sha256Hex(key));

/** The throttle of one email from one client (CF-Connecting-IP: an IPv6 address by its /64; a missing one counts as one "unknown" address). */
export const signInThrottleFor = (env: Env, email: string, clientAddress: string | undefined) => throttleNamed(env, `${email}\n${throttledAddress(clientAddress)}`);

/** The throttle of OAuth client registrations from one client address; a registration keeps its slot for the whole window. */
export const registrationThrottleFor = (env: Env, clientAddress: string | undefined) => throttleNamed(env, `\noauth-registration\n${throttledAddress(clientAddress)}`);
