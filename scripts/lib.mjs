// Helpers shared by the dev, seed and admin scripts: the local admin secret, a server to talk to, admin calls.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, appendFileSync, openSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { summariseMigrations } from "./dev-output.mjs";

export const projectDir = join(dirname(fileURLToPath(import.meta.url)), "..");
// DEV_PORT moves local dev (and what the admin CLI and seed talk to) off 8787. wrangler always opens a debugger port: it is
// DEV_INSPECTOR_PORT when given, else the port next to DEV_PORT (so a range of ports allowed for one stays whole), else 9229.
export const LOCAL_PORT = Number(process.env.DEV_PORT || 8787);
export const LOCAL_INSPECTOR_PORT = Number(process.env.DEV_INSPECTOR_PORT || (process.env.DEV_PORT ? LOCAL_PORT + 1 : 9229));
export const LOCAL_URL = `http://127.0.0.1:${LOCAL_PORT}`;
const devVarsPath = join(projectDir, ".dev.vars");

/** The ADMIN_TOKEN of local dev: from the environment, else .dev.vars, which gets a fresh one on first use. */
export function localAdminToken() {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const existing = existsSync(devVarsPath) ? readFileSync(devVarsPath, "utf8").match(/^ADMIN_TOKEN\s*=\s*"?([^"\n]+)"?/m)?.[1] : undefined;
  if (existing) return existing;
  const token = `dev-admin-${randomBytes(18).toString("base64url")}`;
  appendFileSync(devVarsPath, `ADMIN_TOKEN="${token}"\n`);
  // stderr, so that a command's own output (catalog export > file) stays clean.
  console.error(`Wrote a new local ADMIN_TOKEN to .dev.vars (it is git-ignored).`);
  return token;
}

/** True when .dev.vars sets the var, which then wins over the defaults the scripts pass. */
export function devVarsSets(name) {
  return existsSync(devVarsPath) && new RegExp(`^${name}\\s*=`, "m").test(readFileSync(devVarsPath, "utf8"));
}

/**
 * Vars local dev needs a value for: PUBLIC_URL, where an http agent calls back, is local dev's own address; webhooks may go
 * to localhost; MCP task handles and the like are sealed with a random key per start (what a restart's clients held is void).
 */
export function devVarArgs(url = LOCAL_URL) {
  const args = devVarsSets("PUBLIC_URL") ? [] : ["--var", `PUBLIC_URL:${url}`];
  if (!devVarsSets("MCP_STATE_KEY")) args.push("--var", `MCP_STATE_KEY:${randomBytes(32).toString("base64url")}`);
  return devVarsSets("WEBHOOK_ALLOW_LOOPBACK") ? args : [...args, "--var", "WEBHOOK_ALLOW_LOOPBACK:true"];
}

/** Applies the D1 migrations to local state; says in one line what it applied (on stderr, so command output stays clean) unless quiet. */
export function applyLocalMigrations(extraArgs = [], { quiet = false } = {}) {
  const result = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", ...extraArgs], {
    cwd: projectDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true" },
  });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    throw new Error("applying the local D1 migrations failed");
  }
  if (!quiet) console.error(summariseMigrations(result.stdout));
}

export async function isUp(url, path = "/v1/openapi.json") {
  try {
    const r = await fetch(url + path);
    await r.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** True when nothing listens on the loopback port, so wrangler dev can take it. */
export async function portIsFree(port) {
  const server = createServer();
  try {
    await new Promise((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  } catch {
    return false;
  }
  await new Promise((resolve) => server.close(resolve));
  return true;
}

// Answered only by a wrangler dev these scripts started (src/docs/dev-server.ts): its DEV_SERVER_ID and its agent.
const DEV_SERVER_PATH = "/dev/server";
// Which wrangler dev runs on which port, for the scripts that did not start it (token, admin, seed): one file per port.
const devServerRecords = join(projectDir, ".wrangler", "dev-servers");

/** What answers at url's /dev/server, asked without credentials: { id, agent }, or undefined (nothing, or another server). */
export async function devServerIdentity(url) {
  try {
    const r = await fetch(url + DEV_SERVER_PATH, { redirect: "manual", signal: AbortSignal.timeout(20_000) });
    const body = r.ok ? await r.json() : await r.body?.cancel();
    return typeof body?.id === "string" && typeof body.agent === "string" ? body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until url serves the Worker that child started. A child of startWranglerDev is known by its
 * DEV_SERVER_ID, which no other server can answer, so nothing is sent to a server that took the port
 * first; it resolves to what that Worker says of itself ({ id, agent }). With a path (a Worker without
 * /dev/server), any answer there will do.
 */
export async function waitUntilUp(url, child, { seconds = 90, path } = {}) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error("wrangler dev exited before it was ready");
    if (child?.serverId && path === undefined) {
      const identity = await devServerIdentity(url);
      if (identity?.id === child.serverId) return identity;
    } else if (await isUp(url, path)) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} did not come up within ${seconds} s`);
}

export function startWranglerDev({ port = 8787, inspectorPort = 9229, quiet = false, piped = false, logFile, extraArgs = [], cwd = projectDir } = {}) {
  // Quiet: detached, its output dropped, or written to logFile when one is given. Piped: output for the caller to read.
  const log = quiet && logFile ? openSync(logFile, "w") : null;
  const shown = piped ? ["inherit", "pipe", "pipe"] : "inherit";
  const serverId = randomBytes(16).toString("base64url");
  const child = spawn(
    "wrangler",
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--show-interactive-dev-session=false",
      "--var",
      `DEV_SERVER_ID:${serverId}`,
      ...extraArgs,
    ],
    { cwd, stdio: log === null ? (quiet ? "ignore" : shown) : ["ignore", log, log], detached: quiet },
  );
  child.serverId = serverId;
  return child;
}

/** Stops a quiet (detached) wrangler dev and the workerd it started. */
export function stopWranglerDev(child) {
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {}
}

/** Notes that child, a wrangler dev that answered its id, serves port: npm run token, admin and seed then use it. */
export function recordDevServer(port, child) {
  mkdirSync(devServerRecords, { recursive: true });
  writeFileSync(join(devServerRecords, String(port)), child.serverId);
}

/** Drops the note of recordDevServer, unless a later wrangler dev has taken the port since. */
export function forgetDevServer(port, child) {
  const record = join(devServerRecords, String(port));
  if (existsSync(record) && readFileSync(record, "utf8") === child.serverId) rmSync(record, { force: true });
}

/**
 * Who answers at LOCAL_URL: "ours" when it is the wrangler dev recorded for LOCAL_PORT (npm run dev of
 * this clone), "other" when something else does, "none" when nothing does. Only "ours" may be sent a credential.
 */
export async function localServer() {
  const record = join(devServerRecords, String(LOCAL_PORT));
  const identity = await devServerIdentity(LOCAL_URL);
  if (identity && existsSync(record) && identity.id === readFileSync(record, "utf8")) return "ours";
  return (await isUp(LOCAL_URL, "/")) ? "other" : "none";
}

/** What to do when LOCAL_URL is not this clone's npm run dev, in one line. */
export function notLocalDev(state) {
  return state === "other"
    ? `Something else answers at ${LOCAL_URL}, not this project's npm run dev: stop it, or run both with another DEV_PORT.`
    : `Nothing answers at ${LOCAL_URL}: start it with npm run dev (set DEV_PORT here too if it runs on another port).`;
}

/**
 * Runs fn against url when given; else against local dev if it is running; else starts a
 * temporary local Worker on a spare port for the duration of fn.
 */
export async function withServer(url, fn) {
  if (url) return fn(url);
  const local = await localServer();
  if (local === "ours") return fn(LOCAL_URL);
  // Its admin token goes to no server but this project's own.
  if (local === "other") console.error(`${LOCAL_URL} answers, but not as this project's npm run dev: using a temporary local Worker.`);
  localAdminToken();
  applyLocalMigrations();
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const temporary = `http://127.0.0.1:${port}`;
  const child = startWranglerDev({ port, inspectorPort, quiet: true, extraArgs: devVarArgs(temporary) });
  try {
    await waitUntilUp(temporary, child);
    return await fn(temporary);
  } finally {
    stopWranglerDev(child);
  }
}

export function adminClient(url, token) {
  return async function call(method, path, body) {
    const r = await fetch(url + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text };
  };
}

/** Throws a readable error unless the answer has one of the expected statuses. */
export function expect(answer, statuses, what) {
  if (!statuses.includes(answer.status)) {
    const detail = answer.json?.errors ? answer.json.errors.map((e) => `  ${e.path}: ${e.message}`).join("\n") : (answer.json?.detail ?? answer.text);
    throw new Error(`${what}: HTTP ${answer.status}\n${detail}`);
  }
  return answer;
}

/** A loopback port that nothing listens on now, as the system picks it: two test runs at once get different ones. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Chromium's path, installed first when missing (CI runs as root on Debian; anyone else is told rather than changed). */
export function ensureChromium() {
  const found = () => spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).stdout.trim();
  if (found()) return found();
  if (process.getuid?.() !== 0) throw new Error("chromium is missing: apt-get install -y chromium");
  const install = () => spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).status === 0;
  // A fresh machine may have no package lists yet.
  if (!install() && !(spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore" }).status === 0 && install())) throw new Error("apt-get install chromium failed");
  return found();
}
