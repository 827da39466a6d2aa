// The bookmark of this isolate's latest write made through writeSeenHere: its replica reads start there.
let latestWrite: D1SessionBookmark | null = null;

/**
 * D1 read replication (the Sessions API). A read that tolerates a replica's lag goes to the nearest
 * copy; one that must see the latest write (a flag whose change takes effect "from the moment the
 * call returns") goes to the primary. Without replication enabled both are the primary.
 */
const nearestReplica = (d1: D1Database): D1Database => d1.withSession(latestWrite ?? "first-unconstrained") as unknown as D1Database;
export const primary = (d1: D1Database): D1Database => d1.withSession("first-primary") as unknown as D1Database;

/**
 * Reads from the nearest replica and, when it has no row, confirms on the primary: something
 * created a moment ago (a token, a membership) may not have reached the replica yet.
 */
export async function readNearestThenPrimary<T>(d1: D1Database, read: (db: D1Database) => Promise<T | undefined>): Promise<T | undefined> {
  return (await read(nearestReplica(d1))) ?? (await read(primary(d1)));
}

/**
 * Runs a write on the primary and keeps its bookmark, so this isolate's later replica reads see it
 * however far the nearest replica lags: an admin change to access is seen at once where it was made.
 */
export async function writeSeenHere<T>(d1: D1Database, write: (db: D1Database) => Promise<T>): Promise<T> {
  const session = d1.withSession("first-primary");
  const result = await write(session as unknown as D1Database);
  latestWrite = session.getBookmark() ?? latestWrite;
  return result;
}
