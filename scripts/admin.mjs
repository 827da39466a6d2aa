#!/usr/bin/env node
// npm run admin -- <command> [--url URL] [--token ADMIN_TOKEN]
// Talks to local dev by default (starting a temporary Worker if none runs), or to a deployed Worker with --url.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, expect, localAdminToken, withServer } from "./lib.mjs";

const USAGE = `usage: npm run admin -- <command> [options] [--url URL] [--token ADMIN_TOKEN]

  catalog import FILE                         replace the whole catalog with FILE (JSON catalog document)
  catalog export [FILE]                       print the stored catalog document, or write it to FILE

--url defaults to local dev (http://127.0.0.1:8787); --token defaults to $ADMIN_TOKEN, then .dev.vars.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string" }, token: { type: "string" }, help: { type: "boolean", short: "h" },
  },
});

const commands = {
  "catalog import": async (call, [file]) => {
    if (!file) throw new Error("catalog import needs a FILE");
    expect(await call("PUT", "/admin/catalog", JSON.parse(readFileSync(file, "utf8"))), [204], "catalog import");
    return "Catalog replaced.";
  },
  "catalog export": async (call, [file]) => {
    const doc = JSON.stringify(expect(await call("GET", "/admin/catalog"), [200], "catalog export").json, null, 2) + "\n";
    if (!file) return doc.trimEnd();
    writeFileSync(file, doc);
    return `Wrote ${file}.`;
  },
};

const name = positionals.slice(0, 2).join(" ");
const command = commands[name];
if (values.help || !command) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const token = values.token ?? process.env.ADMIN_TOKEN ?? (values.url ? undefined : localAdminToken());
if (!token) {
  console.error("No admin token: pass --token or set ADMIN_TOKEN.");
  process.exit(2);
}
try {
  const output = await withServer(values.url, (url) => command(adminClient(url, token), positionals.slice(2), values));
  if (output) console.log(output);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
