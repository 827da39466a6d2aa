#!/usr/bin/env node
// npm run admin -- <command> [--url URL] [--token ADMIN_TOKEN]
// Talks to local dev by default (starting a temporary Worker if none runs), or to a deployed Worker with --url.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, expect, localAdminToken, withServer } from "./lib.mjs";

const USAGE = `usage: npm run admin -- <command> [options] [--url URL] [--token ADMIN_TOKEN]

  catalog import FILE                         replace the whole catalog with FILE (JSON catalog document)
  catalog export [FILE]                       write the stored catalog document to FILE, or print it
  account create --email E --password P [--credits N]
  account get --email E                       the account's id, email and credits
  account list [--after EMAIL] [--limit N]    accounts in email order (100 at a time)
  account password --account ID --password P
  credits set --account ID --credits N
  project create --name NAME --owner ACCOUNT_ID [--id UUID]
  project suspend --project ID                project activate --project ID
  member set --project ID --account ID --role owner|editor|viewer
  member remove --project ID --account ID
  maintenance on|off
  move-to-objects                             the one-time move of balances and chat lists from D1 into their objects (docs/deploy.md)

--url defaults to local dev (http://127.0.0.1:8787, or $DEV_PORT); --token defaults to $ADMIN_TOKEN, then .dev.vars.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    help: { type: "boolean", short: "h" },
    email: { type: "string" },
    password: { type: "string" },
    credits: { type: "string" },
    account: { type: "string" },
    name: { type: "string" },
    owner: { type: "string" },
    id: { type: "string" },
    project: { type: "string" },
    role: { type: "string" },
    after: { type: "string" },
    limit: { type: "string" },
  },
});

const commands = {
  "catalog import": async (call, [file]) => {
    if (!file) throw new Error("catalog import needs a FILE");
    expect(await call("PUT", "/admin/catalog", readJsonFile(file)), [204], `catalog import ${file}`);
    return "Catalog replaced.";
  },
  "catalog export": async (call, [file]) => {
    const doc = `${JSON.stringify(expect(await call("GET", "/admin/catalog"), [200], "catalog export").json, null, 2)}\n`;
    if (!file) return doc.trimEnd();
    writeFileSync(file, doc);
    return `Wrote ${file}.`;
  },
};

/** The file's JSON, or an error naming the file and what is wrong with it. */
function readJsonFile(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`catalog import: cannot read ${file}: ${error.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`catalog import: ${file} is not JSON (${error.message}); it starts with ${JSON.stringify(text.slice(0, 60))}`);
  }
}

const need = (o, ...keys) => {
  for (const k of keys) if (o[k] === undefined) throw new Error(`missing --${k}`);
  return o;
};
const show = (answer) => JSON.stringify(answer.json, null, 2);
Object.assign(commands, {
  "account create": async (call, _, o) =>
    show(
      expect(
        await call("POST", "/admin/accounts", { email: need(o, "email", "password").email, password: o.password, ...(o.credits ? { credits: Number(o.credits) } : {}) }),
        [201],
        "account create",
      ),
    ),
  "account get": async (call, _, o) => {
    const { items } = expect(await call("GET", `/admin/accounts?email=${encodeURIComponent(need(o, "email").email)}`), [200], "account get").json;
    if (items.length === 0) throw new Error(`account get: no account has the email ${o.email}`);
    return JSON.stringify(items[0], null, 2);
  },
  "account list": async (call, _, o) => {
    const query = new URLSearchParams({ ...(o.after ? { after: o.after } : {}), ...(o.limit ? { limit: o.limit } : {}) });
    return show(expect(await call("GET", `/admin/accounts?${query}`), [200], "account list"));
  },
  "account password": async (call, _, o) =>
    show(expect(await call("PATCH", `/admin/accounts/${need(o, "account", "password").account}`, { password: o.password }), [200], "account password")),
  "credits set": async (call, _, o) =>
    show(expect(await call("PATCH", `/admin/accounts/${need(o, "account", "credits").account}`, { credits: Number(o.credits) }), [200], "credits set")),
  "project create": async (call, _, o) =>
    show(expect(await call("POST", "/admin/projects", { name: need(o, "name", "owner").name, ownerAccountId: o.owner, ...(o.id ? { id: o.id } : {}) }), [201], "project create")),
  "project suspend": async (call, _, o) => show(expect(await call("PATCH", `/admin/projects/${need(o, "project").project}`, { status: "suspended" }), [200], "project suspend")),
  "project activate": async (call, _, o) => show(expect(await call("PATCH", `/admin/projects/${need(o, "project").project}`, { status: "active" }), [200], "project activate")),
  "member set": async (call, _, o) =>
    show(expect(await call("PUT", `/admin/projects/${need(o, "project", "account", "role").project}/members/${o.account}`, { role: o.role }), [200], "member set")),
  "maintenance on": async (call) => show(expect(await call("PUT", "/admin/maintenance", { enabled: true }), [200], "maintenance on")),
  "maintenance off": async (call) => show(expect(await call("PUT", "/admin/maintenance", { enabled: false }), [200], "maintenance off")),
  "move-to-objects": async (call) => {
    const lines = [];
    for (const kind of ["accounts", "projects"]) {
      let after;
      const total = { moved: 0, alreadyMoved: 0 };
      do {
        const page = expect(await call("POST", "/admin/move-to-objects", { kind, ...(after ? { after } : {}) }), [200], `move-to-objects ${kind}`).json;
        total.moved += page.moved;
        total.alreadyMoved += page.alreadyMoved;
        after = page.next;
      } while (after);
      lines.push(`${kind}: ${total.moved} moved, ${total.alreadyMoved} already moved`);
    }
    return lines.join("\n");
  },
  "member remove": async (call, _, o) => {
    expect(await call("DELETE", `/admin/projects/${need(o, "project", "account").project}/members/${o.account}`), [204], "member remove");
    return "Removed.";
  },
});

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
