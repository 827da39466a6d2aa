import { DurableObject } from "cloudflare:workers";
import { hasTable, migrateSchema } from "../db/object-schema";
import type { Env } from "../env";
import { config } from "../config";
import { findTokenByHash } from "./api-tokens";
import { CREDIT_TABLES, CredentialCredits, type CreditStanding, type ReserveOutcome } from "./credential-credits";
import { LINEAGE_TABLES, RefreshLineage, type RefreshVerdict } from "./refresh-lineage";
import type { Scope } from "./scopes";

/** A credential as its account's list shows it: its last use (epoch ms) and its credits. */
export type CredentialStanding = { lastUsedAt: number | null; creditLimit: number | null; creditsUsed: number };

export type StreamLease = { kind: "opened" } | { kind: "limited"; retryAfterSeconds: number };

export type GateVerdict =
  | { kind: "invalid" }
  | { kind: "limited"; limit: number; retryAfterSeconds: number }
  | { kind: "allowed"; accountId: string; scopes: Scope[]; limit: number; remaining: number; resetSeconds: number; atCreditLimit: boolean };

type TokenRecord = { accountId: string; scopes: Scope[]; expiresAt: number; revoked: boolean };

const WINDOW_MS = 60_000;
// Hits older than the window are deleted this many at a time, not one statement per request.
const PRUNE_BATCH = 64;
export const MAX_STREAMS_PER_TOKEN = 10;
// Chat objects renew the leases of their open streams every STREAM_PULSE_MS (5 s); one that stops lapses.
export const STREAM_LEASE_MS = 15_000;
// Append-only: each entry upgrades the schema by one version.
const MIGRATIONS = [
  [
    "CREATE TABLE IF NOT EXISTS token (hash TEXT PRIMARY KEY, account_id TEXT, scopes TEXT, expires_at INTEGER, revoked INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hits_by_time ON hits (at)",
  ],
  // The token's last use, kept here (it sees every request) rather than written to D1.
  ["ALTER TABLE token ADD COLUMN last_used_at INTEGER"],
  // An OAuth grant's refresh tokens, for replay detection (refresh-lineage.ts).
  LINEAGE_TABLES,
  // The credential's credit limit and what its tasks spent (credential-credits.ts).
  CREDIT_TABLES,
];
const NO_CREDITS_YET: CreditStanding = { creditLimit: null, creditsUsed: 0 };
// How long a presentation of a refresh token waits for the same token's refresh still under way.
const REFRESH_WAIT_MS = 10_000;

/**
 * One object per credential: a personal API token (named by its hash, its record read from D1 the first
 * time) or an OAuth grant (named `grant:<id>`, enrolled at approval, with its refresh tokens' lineage).
 * It knows the credential's account, scopes, expiry and revocation, counts its requests over a rolling
 * minute and leases its stream places. The count and the admission happen in one synchronous stretch,
 * so parallel requests are counted exactly.
 */
export class TokenGate extends DurableObject<Env> {
  private record: TokenRecord | undefined;
  private loading: Promise<TokenRecord | undefined> | undefined;
  // Admission times, oldest first: a mirror of the hits table, so a request costs O(1).
  private hits: number[] | undefined;
  // Index of the oldest hit still inside the window; hits before `stored` are no longer in the table.
  private oldestHit = 0;
  private stored = 0;
  // Open event streams: lease id → when it lapses unless renewed. Memory is enough: renewals rebuild it after a restart.
  private readonly streams = new Map<string, number>();

  // Refreshes under way, by the presented token's hash: a second presentation decides after the first is answered.
  private readonly refreshing = new Map<string, { done: Promise<void>; end: () => void }>();

  private schemaReady = false;
  private creditsKept: CredentialCredits | undefined;

  /** True once the object has stored anything (its schema then brought up to date); reads only otherwise. */
  private hasStorage(): boolean {
    if (!this.schemaReady && hasTable(this.ctx.storage.sql, "meta")) this.ensureSchema();
    return this.schemaReady;
  }

  /** The credential's credit limit and spend, once it has storage. */
  private credits(): CredentialCredits {
    this.ensureSchema();
    this.creditsKept ??= new CredentialCredits(this.ctx.storage.sql);
    return this.creditsKept;
  }

  /** Creates the tables right before the first write (a known token, or a revocation), never for an unknown token. */
  private ensureSchema(): void {
    if (this.schemaReady) return;
    migrateSchema(this.ctx.storage.sql, MIGRATIONS);
    this.schemaReady = true;
  }

  /**
   * Decides one request: invalid token, over the limit, or allowed (and counted). For an OAuth grant,
   * `accessHash` is the access token's: one issued with a refresh token a retry replaced is invalid.
   */
  async admit(name: string, accessHash?: string): Promise<GateVerdict> {
    const record = this.record ?? (await this.load(name));
    const now = Date.now();
    if (!record || record.revoked || record.expiresAt <= now) return { kind: "invalid" };
    if (accessHash && this.hasStorage() && new RefreshLineage(this.ctx.storage.sql).accessRevoked(accessHash)) return { kind: "invalid" };

    // From here to the return there is no await: nothing interleaves between count and insert.
    const limit = config(this.env).rateLimitPerMinute;
    const sql = this.ctx.storage.sql;
    const window = (this.hits ??= sql
      .exec<{ at: number }>("SELECT at FROM hits ORDER BY at")
      .toArray()
      .map((r) => r.at));
    const cutoff = now - WINDOW_MS;
    let first = this.oldestHit;
    while (first < window.length && window[first]! <= cutoff) first++;
    this.oldestHit = first;
    // Expired rows left in the table are skipped when it is read again, so deleting them can wait for a batch.
    if (first - this.stored >= PRUNE_BATCH) {
      sql.exec("DELETE FROM hits WHERE at <= ?", window[first - 1]!);
      this.stored = first;
    }
    const count = window.length - first;
    const oldest = count > 0 ? window[first]! : null;
    const frees = (at: number | null) => Math.max(1, Math.ceil(((at ?? now) + WINDOW_MS - now) / 1000));
    if (count >= limit) return { kind: "limited", limit, retryAfterSeconds: frees(oldest) };
    // The newest hit is also the token's last use: a hit is deleted only once a newer one is stored.
    sql.exec("INSERT INTO hits (at) VALUES (?)", now);
    window.push(now);
    // Compact now and then, so the array does not grow with every request ever admitted.
    if (this.stored > 1024 && this.stored * 2 > window.length) {
      this.hits = window.slice(this.stored);
      this.oldestHit -= this.stored;
      this.stored = 0;
    }

    const { creditLimit, creditsUsed } = this.creditStandingNow();
    const atCreditLimit = creditLimit !== null && creditsUsed >= creditLimit;
    return { kind: "allowed", accountId: record.accountId, scopes: record.scopes, limit, remaining: limit - count - 1, resetSeconds: frees(oldest ?? now), atCreditLimit };
  }

  /** What the account's list shows of the credential: its last use, its credit limit and what its tasks spent; reads only. */
  async standing(name: string): Promise<CredentialStanding> {
    const { creditLimit, creditsUsed } = this.creditStandingNow();
    return { lastUsedAt: this.lastUsed(name), creditLimit, creditsUsed };
  }

  /** When the token last passed this gate (epoch ms), or null; reads only, so asking about an unused token stores nothing. */
  private lastUsed(name: string): number | null {
    if (!this.hasStorage()) return null;
    // The newest hit; last_used_at is the last use as the previous version wrote it (it deleted hits as they expired).
    const row = this.ctx.storage.sql
      .exec<{ at: number | null }>("SELECT MAX(COALESCE((SELECT last_used_at FROM token WHERE hash = ?), 0), COALESCE((SELECT MAX(at) FROM hits), 0)) AS at", name)
      .one();
    return row.at ? row.at : null;
  }

  /** Takes one of the token's stream places, in one synchronous stretch, so parallel opens are counted exactly. */
  async openStream(leaseId: string): Promise<StreamLease> {
    const now = Date.now();
    for (const [id, lapsesAt] of this.streams) if (lapsesAt <= now) this.streams.delete(id);
    if (this.streams.size >= MAX_STREAMS_PER_TOKEN) {
      const soonest = Math.min(...this.streams.values());
      return { kind: "limited", retryAfterSeconds: Math.max(1, Math.ceil((soonest - now) / 1000)) };
    }
    this.streams.set(leaseId, now + STREAM_LEASE_MS);
    return { kind: "opened" };
  }

  /** Keeps a chat object's streams open; false once the token is revoked or expired (the streams then end). */
  async renewStreams(name: string, leaseIds: string[]): Promise<boolean> {
    const valid = await this.isValid(name);
    const now = Date.now();
    for (const id of leaseIds) {
      if (valid) this.streams.set(id, now + STREAM_LEASE_MS);
      else this.streams.delete(id);
    }
    return valid;
  }

  /** Whether the token may still be used (known, unrevoked, unexpired); counts nothing. */
  async isValid(name: string): Promise<boolean> {
    const record = this.record ?? (await this.load(name));
    return record !== undefined && !record.revoked && record.expiresAt > Date.now();
  }

  /** The credential's credit limit and spend; reads only, so asking about an unused credential stores nothing. */
  async creditStanding(): Promise<CreditStanding> {
    return this.creditStandingNow();
  }

  private creditStandingNow(): CreditStanding {
    return this.hasStorage() ? this.credits().standing() : NO_CREDITS_YET;
  }

  /** Sets the credential's credit limit (null: none): tasks dispatched after this returns are held to it. */
  async setCreditLimit(limit: number | null): Promise<CreditStanding> {
    return this.credits().setLimit(limit);
  }

  /** Counts a task's credits against the limit before the owner's ledger is charged (idempotent per task). */
  async reserveCredits(taskId: string, amount: number): Promise<ReserveOutcome> {
    return this.credits().reserve(taskId, amount, Date.now());
  }

  /** The owner's ledger refused the task's charge: its credits no longer count. */
  async releaseCredits(taskId: string): Promise<void> {
    this.credits().release(taskId);
  }

  /** A charged task's credits went back to the owner: they no longer count against the limit. */
  async refundCredits(taskId: string): Promise<void> {
    this.credits().refund(taskId);
  }

  async closeStream(leaseId: string): Promise<void> {
    this.streams.delete(leaseId);
  }

  /**
   * Makes this the gate of a credential D1 does not hold (an OAuth grant, named `grant:<id>`): its
   * account, scopes and end, or, for null, a gate that admits nothing. Once per name, in one
   * statement: false when the gate already has its record, which stays as it was (a replayed approval).
   */
  async enroll(name: string, record: { accountId: string; scopes: Scope[]; expiresAt: number } | null): Promise<boolean> {
    this.ensureSchema();
    const stored = record ?? { accountId: "", scopes: [], expiresAt: 0 };
    const inserted = this.ctx.storage.sql
      .exec(
        "INSERT INTO token (hash, account_id, scopes, expires_at, revoked) VALUES (?, ?, ?, ?, ?) ON CONFLICT(hash) DO NOTHING RETURNING hash",
        name,
        stored.accountId,
        JSON.stringify(stored.scopes),
        stored.expiresAt,
        record ? 0 : 1,
      )
      .toArray();
    if (inserted.length === 0) return false;
    this.record = { ...stored, revoked: !record };
    return true;
  }

  /**
   * A grant's refresh token presented at the token endpoint: "proceed" lets the library answer it (then
   * `refreshAnswered`); "replay" (a used token, outside a lost answer's retry) revokes the grant here, at
   * once, as a disconnect does; "revoked": the grant had ended already. A presentation of a token whose
   * refresh is still under way waits for its answer first, so a retry is told from a replay.
   */
  async presentRefresh(name: string, refreshHash: string): Promise<RefreshVerdict | "revoked"> {
    const under = this.refreshing.get(refreshHash);
    if (under) await Promise.race([under.done, scheduler.wait(REFRESH_WAIT_MS)]);
    if (!(await this.isValid(name))) return "revoked";
    this.ensureSchema();
    const verdict = new RefreshLineage(this.ctx.storage.sql).verdict(refreshHash, Date.now());
    if (verdict === "replay") {
      await this.revoke(name);
      return verdict;
    }
    let end = () => {};
    const done = new Promise<void>((resolve) => (end = resolve));
    this.refreshing.set(refreshHash, { done, end });
    return verdict;
  }

  /** The token endpoint's answer to a refresh (`presented`) or a code exchange (null): the tokens it issued, or none when it refused. */
  async refreshAnswered(presented: string | null, issued: { refreshHash: string; accessHash: string } | null): Promise<void> {
    if (issued) {
      this.ensureSchema();
      new RefreshLineage(this.ctx.storage.sql).issued(presented, issued.refreshHash, issued.accessHash, Date.now());
    }
    if (presented === null) return;
    this.refreshing.get(presented)?.end();
    this.refreshing.delete(presented);
  }

  /** Blocks every later request with this token. Durable before it returns. */
  async revoke(name: string): Promise<void> {
    this.ensureSchema();
    this.ctx.storage.sql.exec("INSERT INTO token (hash, revoked) VALUES (?, 1) ON CONFLICT(hash) DO UPDATE SET revoked = 1", name);
    if (this.record) this.record.revoked = true;
    else this.record = { accountId: "", scopes: [], expiresAt: 0, revoked: true };
  }

  private load(name: string): Promise<TokenRecord | undefined> {
    this.loading ??= this.loadOnce(name).finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async loadOnce(name: string): Promise<TokenRecord | undefined> {
    const sql = this.ctx.storage.sql;
    const stored = () =>
      sql.exec<{ account_id: string | null; scopes: string | null; expires_at: number | null; revoked: number }>("SELECT * FROM token WHERE hash = ?", name).toArray()[0];
    let row = this.hasStorage() ? stored() : undefined;
    if (!row || row.account_id === null) {
      const fromD1 = await findTokenByHash(this.env.DB, name);
      if (!fromD1) return undefined; // unknown tokens are not remembered, so they cannot fill storage
      this.ensureSchema();
      // A revoke that landed while D1 was read wins: the upsert keeps revoked = 1.
      sql.exec(
        `INSERT INTO token (hash, account_id, scopes, expires_at, revoked) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(hash) DO UPDATE SET account_id = excluded.account_id, scopes = excluded.scopes, expires_at = excluded.expires_at, revoked = MAX(revoked, excluded.revoked)`,
        name,
        fromD1.accountId,
        JSON.stringify(fromD1.scopes),
        Date.parse(fromD1.expiresAt),
        fromD1.revokedAt ? 1 : 0,
      );
      row = stored();
    }
    if (!row || row.account_id === null) return undefined;
    this.record = { accountId: row.account_id, scopes: JSON.parse(row.scopes ?? "[]"), expiresAt: row.expires_at ?? 0, revoked: row.revoked === 1 };
    return this.record;
  }
}
