/** The innermost cause's message: the database's own under drizzle's wrapper (whose message also lists bound parameters). */
export function innermostMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/** What a log may say about an error: its kind, the innermost message and the stack frames, never query parameters. */
export function describeForLog(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split("\n")[0]!.slice(0, 300);
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => line.trim().startsWith("at "))
    .slice(0, 8);
  return [`${error.name}: ${innermostMessage(error).split("\n")[0]!.slice(0, 300)}`, ...frames].join("\n");
}

type Fields = Record<string, unknown>;

function line(level: "warn" | "error", event: string, fields: Fields, error: unknown): string {
  return JSON.stringify({ level, event, ...fields, ...(error === undefined ? {} : { error: describeForLog(error) }) });
}

/**
 * One structured log line per event: its level, a snake_case name and a few ids, and an error as
 * describeForLog tells it (never query parameters, bodies or secrets).
 */
export const log = {
  warn: (event: string, fields: Fields = {}, error?: unknown) => console.warn(line("warn", event, fields, error)),
  error: (event: string, fields: Fields = {}, error?: unknown) => console.error(line("error", event, fields, error)),
};
