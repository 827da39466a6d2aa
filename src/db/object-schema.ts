/** True when a Durable Object's SQLite storage has this table; reads only, so asking stores nothing. */
export const hasTable = (sql: SqlStorage, name: string): boolean => sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;

/** A number kept in the object's `meta` table (its schema version, and what each object keeps beside it); undefined when it has none. */
export const metaValue = (sql: SqlStorage, key: string): number | undefined => sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value;

/**
 * Brings a Durable Object's SQLite schema up to date: `migrations[i]` takes it from version i to
 * i + 1, and the version reached is kept in a `meta` table. Append-only: never edit an entry.
 */
export function migrateSchema(sql: SqlStorage, migrations: readonly (readonly string[])[]): void {
  sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  const current = metaValue(sql, "schema") ?? 0;
  for (let version = current; version < migrations.length; version++) {
    for (const statement of migrations[version]!) sql.exec(statement);
    sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", version + 1);
  }
}
