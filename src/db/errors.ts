// The database's own message is the innermost one, under drizzle's wrapper (whose message also lists bound parameters).
import { innermostMessage } from "../log";

export const isUniqueViolation = (error: unknown) => /UNIQUE constraint failed/i.test(innermostMessage(error));
export const isForeignKeyViolation = (error: unknown) => /FOREIGN KEY constraint failed/i.test(innermostMessage(error));

// D1's documented transient failures (reset, overload, lost connection, storage timeouts) and, in
// local dev, a locked database file. Mistakes in our SQL (syntax, no such table, constraints) are not among them.
const UNAVAILABLE =
  /Network connection lost|reset because|caused object to be reset|was reset|overloaded|transient issue|Too many requests queued|exceeded its (memory|CPU)|storage operation exceeded timeout|client disconnected|database is locked|SQLITE_BUSY|session commit token/i;

/** Thrown where D1 could not answer and no recent enough copy of the value was held; answered with 503. */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    super(`D1 is unavailable: ${innermostMessage(cause).split("\n")[0]!.slice(0, 200)}`, { cause });
    this.name = "DatabaseUnavailable";
  }
}

/** True when the error says D1 could not be reached or could not serve the query, rather than that the query was wrong. */
export const isDatabaseUnavailable = (error: unknown): boolean => error instanceof DatabaseUnavailable || UNAVAILABLE.test(innermostMessage(error));
