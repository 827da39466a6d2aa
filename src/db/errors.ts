/** The database's own message, under drizzle's wrapper (whose message also lists bound parameters). */
function databaseMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

export const isUniqueViolation = (error: unknown) => /UNIQUE constraint failed/i.test(databaseMessage(error));
export const isForeignKeyViolation = (error: unknown) => /FOREIGN KEY constraint failed/i.test(databaseMessage(error));

/** What a log may say about an error: its kind, the innermost message and the stack frames, never query parameters. */
export function describeForLog(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split("\n")[0]!.slice(0, 300);
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => line.trim().startsWith("at "))
    .slice(0, 8);
  return [`${error.name}: ${databaseMessage(error).split("\n")[0]!.slice(0, 300)}`, ...frames].join("\n");
}
