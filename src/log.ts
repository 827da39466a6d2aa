import { describeForLog } from "./db/errors";

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
