/**
 * The refresh tokens of one OAuth grant, in the order they were issued, kept by the grant's gate (by
 * SHA-256 hash), so that a refresh token stolen and used by someone else ends the grant for both:
 * a used token may be presented again only to retry a lost answer (within a minute of its first use,
 * while its successor is unused); any other presentation of a used or invalidated token is a replay.
 */

// A client whose answer was lost retries at once; past a minute the token is someone else's.
export const RETRY_WINDOW_MS = 60_000;
// Refresh tokens live 30 days from their issue, access tokens an hour: rows past that are forgotten.
const KEPT_MS = 31 * 86_400_000;
const ACCESS_TOKEN_MS = 3_600_000;

export const LINEAGE_TABLES = [
  // used_at: when its first refresh succeeded; successor: the token that refresh issued (replaced by a retry's).
  "CREATE TABLE IF NOT EXISTS refresh_tokens (hash TEXT PRIMARY KEY, issued_at INTEGER NOT NULL, used_at INTEGER, successor TEXT, access_hash TEXT, invalidated INTEGER NOT NULL DEFAULT 0)",
  // Access tokens issued with a refresh token that a retry invalidated, until they would have expired anyway.
  "CREATE TABLE IF NOT EXISTS revoked_access (hash TEXT PRIMARY KEY, until INTEGER NOT NULL)",
];

/** "proceed": the library may answer it; "replay": the grant ends. A token this grant never issued is the library's to refuse. */
export type RefreshVerdict = "proceed" | "replay";

type TokenRow = { hash: string; issued_at: number; used_at: number | null; successor: string | null; access_hash: string | null; invalidated: number };

export class RefreshLineage {
  constructor(private readonly sql: SqlStorage) {}

  private row(hash: string): TokenRow | undefined {
    return this.sql.exec<TokenRow>("SELECT * FROM refresh_tokens WHERE hash = ?", hash).toArray()[0];
  }

  /** What a presentation of this refresh token is. */
  verdict(hash: string, now: number): RefreshVerdict {
    const token = this.row(hash);
    if (!token || token.used_at === null) return token?.invalidated ? "replay" : "proceed";
    if (token.invalidated) return "replay";
    const successor = token.successor ? this.row(token.successor) : undefined;
    const successorUnused = successor === undefined || successor.used_at === null;
    return now - token.used_at <= RETRY_WINDOW_MS && successorUnused ? "proceed" : "replay";
  }

  /**
   * A refresh (or, with `presented` null, the code exchange) answered with these tokens. A retry's answer
   * replaces the first one: its refresh token and the access token issued with it stop working.
   */
  issued(presented: string | null, refreshHash: string, accessHash: string, now: number): void {
    this.sql.exec("DELETE FROM refresh_tokens WHERE issued_at < ?", now - KEPT_MS);
    this.sql.exec("DELETE FROM revoked_access WHERE until < ?", now);
    if (presented !== null) {
      const earlier = this.row(presented);
      const replaced = earlier?.successor ? this.row(earlier.successor) : undefined;
      if (replaced) {
        this.sql.exec("UPDATE refresh_tokens SET invalidated = 1 WHERE hash = ?", replaced.hash);
        if (replaced.access_hash) this.sql.exec("INSERT OR IGNORE INTO revoked_access (hash, until) VALUES (?, ?)", replaced.access_hash, now + ACCESS_TOKEN_MS);
      }
      // A token from before this record was kept counts as issued now, and used now.
      this.sql.exec(
        `INSERT INTO refresh_tokens (hash, issued_at, used_at, successor) VALUES (?, ?, ?, ?)
         ON CONFLICT(hash) DO UPDATE SET used_at = COALESCE(used_at, excluded.used_at), successor = excluded.successor`,
        presented,
        now,
        now,
        refreshHash,
      );
    }
    this.sql.exec("INSERT OR IGNORE INTO refresh_tokens (hash, issued_at, access_hash) VALUES (?, ?, ?)", refreshHash, now, accessHash);
  }

  /** Whether an access token was issued with a refresh token that a retry replaced. */
  accessRevoked(accessHash: string): boolean {
    return this.sql.exec("SELECT 1 FROM revoked_access WHERE hash = ?", accessHash).toArray().length > 0;
  }
}
