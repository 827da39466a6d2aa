// What npm run dev shows of wrangler's output: each thing once, and no warning that is not true here.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** One line for `wrangler d1 migrations apply` output: which migrations it applied, or that there were none. */
export function summariseMigrations(output) {
  const pending = output.split("Migrations to be applied:")[1]?.split("?")[0] ?? "";
  const names = [...pending.matchAll(/│ (\S+\.sql)\s*│/g)].map((m) => m[1]);
  if (names.length === 0) return "Local D1: migrations up to date.";
  return `Local D1: applied ${names.length} migration${names.length === 1 ? "" : "s"} (${names.length > 2 ? `${names[0]} … ${names.at(-1)}` : names.join(", ")}).`;
}

const BINDINGS_START = "Your Worker has access to the following bindings:";
const TYPES_WARNING = /Your types might be out of date/;

/**
 * A line filter for wrangler dev: the bindings table is printed again on every reload, so a copy
 * equal to the last one shown is dropped; and the types warning, which wrangler raises because its
 * check counts .dev.vars secrets that `npm run types` leaves out on purpose, is replaced by the
 * verdict of the project's own check (`onTypesWarning` answers the line to print, or nothing).
 */
export function devOutputFilter({ onTypesWarning }) {
  let shownBindings = "";
  let block = null;
  return (line, print) => {
    if (block !== null) {
      // The scripts' own per-run id (scripts/lib.mjs startWranglerDev), no setting of the reader's.
      if (line.includes("env.DEV_SERVER_ID ")) return;
      block.push(line);
      if (line.trim() !== "") return;
      const text = block.join("\n");
      block = null;
      if (text !== shownBindings) print((shownBindings = text));
      return;
    }
    if (line.includes(BINDINGS_START)) block = [line];
    else if (TYPES_WARNING.test(line)) onTypesWarning(print);
    else print(line);
  };
}

/** Runs `npm run types -- --check` quietly: resolves to true when worker-configuration.d.ts matches the configuration. */
export function typesUpToDate(cwd) {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "-s", "types", "--", "--check"], { cwd, stdio: "ignore" });
    child.on("exit", (code) => resolve(code === 0));
    child.on("error", () => resolve(false));
  });
}

/** Passes each line of a stream through filter, writing what it keeps to out. */
export function pipeLines(stream, out, filter) {
  const print = (text) => out.write(`${text}\n`);
  createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => filter(line, print));
}
