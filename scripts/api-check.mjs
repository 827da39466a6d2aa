#!/usr/bin/env node
// npm run api-check [-- lint client docs] [--port 8802]: checks the API as a Worker serves it, against a fresh
// wrangler dev with its own local state and port:
//   lint    redocly lint (recommended rules) of /v1/openapi.json and /admin/openapi.json: no error, no warning
//   client  openapi-typescript types from the served document (equal to client/src/generated/api.ts, or --update-client
//           writes them there), a type-checked openapi-fetch client run against it
//   docs    /v1/docs and the front page / rendered by headless Chromium with no network beyond loopback; the operations must show
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { adminClient, applyLocalMigrations, ensureChromium, portIsFree, projectDir, startWranglerDev, stopWranglerDev, waitUntilUp } from "./lib.mjs";
import { DEMO, seedDemoData } from "./seed-data.mjs";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { port: { type: "string", default: "8802" }, "update-client": { type: "boolean", default: false } } });
const steps = positionals.length ? positionals : ["lint", "client", "docs"];
const port = Number(values.port);
const base = `http://127.0.0.1:${port}`;
const adminToken = `check-admin-${randomBytes(12).toString("hex")}`;
const work = mkdtempSync(join(tmpdir(), "api-check-"));

/** Runs a command from the project (node_modules/.bin first on PATH via npm) and fails loudly. */
function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: projectDir, encoding: "utf8", ...options, env: { ...process.env, ...options.env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${result.stdout ?? ""}${result.stderr ?? ""}`);
  return result.stdout;
}

async function download(path, file, headers = {}) {
  // One more try on a new connection: wrangler dev closes one idle for 15 s, and a step's spawnSync can hold the event loop
  // past that, so fetch may reuse a pooled connection whose close it has not yet seen ("other side closed").
  const response = await fetch(base + path, { headers }).catch(() => fetch(base + path, { headers }));
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`);
  writeFileSync(file, await response.text());
  return file;
}

async function lint() {
  const documents = [
    await download("/v1/openapi.json", join(work, "public.json")),
    await download("/admin/openapi.json", join(work, "operator.json"), { authorization: `Bearer ${adminToken}` }),
  ];
  for (const file of documents) {
    const report = JSON.parse(
      run("redocly", ["lint", file, "--extends=recommended", "--format=json"], { env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } }),
    );
    const found = report.problems.map((p) => `  ${p.severity} ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? ""})`);
    if (report.totals.errors + report.totals.warnings > 0) throw new Error(`redocly lint ${file}:\n${found.join("\n")}`);
    console.log(`lint: ${file.endsWith("public.json") ? "/v1/openapi.json" : "/admin/openapi.json"}: 0 errors, 0 warnings`);
  }
}

async function client() {
  const generated = join(projectDir, "scripts/client-check/generated");
  mkdirSync(generated, { recursive: true });
  run("openapi-typescript", [await download("/v1/openapi.json", join(work, "public.json")), "--output", join(generated, "api.d.ts")]);
  // The TypeScript client's checked-in types must be the served document's: --update-client writes them.
  const clientTypes = join(projectDir, "client/src/generated/api.ts");
  const served = readFileSync(join(generated, "api.d.ts"), "utf8");
  if (values["update-client"]) writeFileSync(clientTypes, served);
  else if (readFileSync(clientTypes, "utf8") !== served) throw new Error("client/src/generated/api.ts is stale: run npm run api-check -- --update-client");
  run("tsc", ["--project", "scripts/client-check/tsconfig.json"]);
  console.log(run("node", ["scripts/client-check/client.ts", base, DEMO.email, DEMO.password, DEMO.projectId]).trim());
}

const escapeHtml = (text) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

async function docs() {
  const screenshot = join(projectDir, "dist", "docs-screenshot.png");
  const flags = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    // Every host name except the loopback address fails to resolve: the page must need nothing from the internet.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    `--user-data-dir=${join(work, "chromium")}`,
    "--window-size=1280,1600",
    "--virtual-time-budget=15000",
  ];
  // Every operation of the served document must be listed by the rendered page (all tags start open).
  const document = JSON.parse(readFileSync(await download("/v1/openapi.json", join(work, "public.json")), "utf8"));
  const dom = run("chromium", [...flags, "--dump-dom", `${base}/v1/docs`], { maxBuffer: 64 * 1024 * 1024 });
  run("chromium", [...flags, `--screenshot=${screenshot}`, `${base}/v1/docs`]);
  writeFileSync(join(projectDir, "dist", "docs-dom.html"), dom);
  const summaries = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.summary));
  const text = dom.replace(/<[^>]*>/g, "").replace(/\s+/g, " ");
  const missing = summaries.filter((summary) => !text.includes(escapeHtml(summary)));
  if (missing.length) throw new Error(`docs: the reference page did not render:\n  ${missing.join("\n  ")}\n(screenshot: ${screenshot})`);
  // Set up for API users: the token's field open from the start, Scalar's own toolbar (Configure, Share, Deploy) not shown.
  if (!text.includes("Bearer Token") || text.includes("Developer Tools"))
    throw new Error(`docs: /v1/docs should open with a Bearer Token field and no developer toolbar (screenshot: ${screenshot})`);
  console.log(`docs: /v1/docs rendered all ${summaries.length} operations with no network beyond loopback (screenshot: ${screenshot})`);

  // The front door: rendered as a browser asks for it, it must link the reference and the JSON and name this version.
  const frontScreenshot = join(projectDir, "dist", "front-screenshot.png");
  const front = run("chromium", [...flags, "--dump-dom", `${base}/`]);
  run("chromium", [...flags, `--screenshot=${frontScreenshot}`, `${base}/`]);
  const { version } = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8"));
  const expected = ["<h1>Project Chat API</h1>", '<a href="/v1/docs">', '<a href="/v1/openapi.json">', "npm run token", `Version ${version}`];
  const absent = expected.filter((part) => !front.includes(part));
  if (absent.length) throw new Error(`docs: the front page at / lacks:\n  ${absent.join("\n  ")}\n(screenshot: ${frontScreenshot})`);
  console.log(`docs: / rendered with links to the reference and the OpenAPI JSON and version ${version} (screenshot: ${frontScreenshot})`);
}

const state = join(work, "state");
let server;
try {
  // Another server on the port would be checked instead of this tree's Worker.
  if (!(await portIsFree(port))) throw new Error(`port ${port} is in use; pass --port`);
  // Before the server starts, so a long install never runs beside it.
  if (steps.includes("docs")) ensureChromium();
  applyLocalMigrations(["--persist-to", state], { quiet: true });
  server = startWranglerDev({
    port,
    inspectorPort: port + 1,
    quiet: true,
    // --env-file: an empty file instead of the developer's .dev.vars, so a local AGENT_MODE cannot change what is checked.
    extraArgs: ["--persist-to", state, "--log-level", "error", "--env-file", devNull, "--var", `ADMIN_TOKEN:${adminToken}`, "--var", "LOCAL_AGENT_DELAY_MS:200"],
  });
  await waitUntilUp(base, server);
  await seedDemoData(adminClient(base, adminToken));
  const started = Date.now();
  for (const step of steps) await { lint, client, docs }[step]();
  console.log(`api-check: ${steps.join(", ")} passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  // A refused connection means the server went away: say how it ended.
  const ended = server && (server.exitCode !== null || server.signalCode !== null) ? ` (wrangler dev had exited with ${server.exitCode ?? server.signalCode})` : "";
  console.error(`${error.message}${ended}`);
  process.exitCode = 1;
} finally {
  if (server) stopWranglerDev(server);
  rmSync(work, { recursive: true, force: true });
}
