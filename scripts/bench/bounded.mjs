#!/usr/bin/env node
// npm run bench:bounded: what one chat, one stream and one caller cost the service (docs/performance.md, "Bounded cost").
//  1. 100 sends of 100,000 characters to one chat, as fast as its queue bound lets them in, then run: the bytes its event
//     log stores and one follower receives, against the bytes sent.
//  2. 100 streams that never read, on a chat whose queue is full and changing: the server's memory, and another chat's
//     send latency without and with them.
//  3. GET /v1/openapi.json with 5,000 distinct Host values: the server's memory.
//  4. 300 sends of 100,000 characters that all fail (an owner with no credits), as fast as the queue lets them in: what
//     the chat's object stores (its SQLite file, the submissions' text, the event log).
// `--project DIR` measures another checkout (a git worktree of an earlier commit) with this same script; `--only 4` runs
// only the scenarios named (comma-separated).
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { projectDir as here, stopWranglerDev, waitUntilUp } from "../lib.mjs";
import { startFreshWorker } from "./fresh-worker.mjs";
import { jsonApi } from "./json-api.mjs";

const { values } = parseArgs({ options: { project: { type: "string", default: here }, only: { type: "string", default: "1,2,3,4" } } });
const only = new Set(values.only.split(",").map((n) => n.trim()));
const projectDir = resolve(values.project);
const port = 8860;
const base = `http://127.0.0.1:${port}`;
const api = jsonApi(base);
const ADMIN = `bounded-admin-${randomUUID()}`;
// A 40 ms agent writes a part every 10 ms, whole milliseconds, so earlier commits (whose alarms stalled on fractions) run too.
const vars = { ADMIN_TOKEN: ADMIN, RATE_LIMIT_PER_MINUTE: "100000000", LOCAL_AGENT_DELAY_MS: "40", TASK_CREDIT_COST: "1", AGENT_MODE: "local" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;

const { child, state } = startFreshWorker({ name: "bounded", projectDir, port, vars });

try {
  await waitUntilUp(base, child);
  const world = await newWorld(10);
  console.log(`\nbounded cost of ${projectDir} (git ${git("rev-parse", "--short", "HEAD")}), state on ${state}\n`);
  // Memory first, on a server that has done little: the log scenario leaves much garbage behind.
  if (only.has("3")) await hostValues();
  if (only.has("2")) await unreadStreams(world);
  if (only.has("1")) await logAndFollower(world);
  if (only.has("4")) await failingSends();
} finally {
  stopWranglerDev(child);
  rmSync(state, { recursive: true, force: true });
}

/** 1. One chat, 100 sends of 100,000 characters as its queue lets them in, run to the end. */
async function logAndFollower(w) {
  const chat = await newChat(w, "log");
  const follower = await follow(w, chat.id, w.follower);
  const content = (i) => `${String(i).padStart(3, "0")} ${"x".repeat(99_996)}`;
  let sent = 0;
  let refused = 0;
  const started = Date.now();
  for (let i = 0; i < 100; i++) {
    refused += await sendWhenQueued(w, chat.id, content(i));
    sent += content(i).length;
  }
  await until(async () => {
    const c = (await api("GET", `/v1/projects/${w.projectId}/chats/${chat.id}`, w.tokens[0])).json;
    return !c.isWorking && c.queuedCount === 0;
  }, 600_000);
  const took = Date.now() - started;
  await sleep(1000);
  follower.close();
  const stored = storedLogBytes(chat.id);
  console.log("1. 100 sends of 100,000 characters to one chat, then run");
  console.log(`   sent ${mb(sent)}; the queue refused ${refused} tries (queue_full) on the way; ${(took / 1000).toFixed(1)} s to run them all`);
  console.log(
    `   stored log ${mb(stored)} (${(stored / sent).toFixed(2)}x); one follower received ${mb(follower.bytes())} (${(follower.bytes() / sent).toFixed(2)}x); target ≤ 4x each\n`,
  );
}

/** 2. 100 streams that never read, on a chat whose queue is full and changing; another chat's sends meanwhile. */
async function unreadStreams(w) {
  const crowded = await newChat(w, "crowded");
  const quiet = await newChat(w, "quiet");
  await admin("PUT", "/admin/maintenance", { enabled: true });
  const entries = [];
  try {
    for (let i = 0; i < 100; i++) {
      const r = await api(
        "POST",
        `/v1/projects/${w.projectId}/chats/${crowded.id}/messages`,
        w.tokens[0],
        { content: `${i} ${"q".repeat(9_900)}` },
        { "idempotency-key": randomUUID() },
      );
      if (r.status === 202) entries.push(r.json.submissionId);
    }
    const latency = async () => {
      const times = [];
      for (let i = 0; i < 30; i++) {
        const t0 = performance.now();
        const r = await api("POST", `/v1/projects/${w.projectId}/chats/${quiet.id}/messages`, w.tokens[1], { content: `quiet ${i}` }, { "idempotency-key": randomUUID() });
        if (r.status !== 202) throw new Error(`quiet send: ${r.status} ${r.text}`);
        times.push(performance.now() - t0);
      }
      return times.sort((a, b) => a - b)[15];
    };
    await latency(); // warm
    const before = { memory: memory(), heap: await heapUsed(), latency: await latency() };
    const sockets = [];
    for (let i = 0; i < 100; i++) sockets.push(neverReading(`/v1/projects/${w.projectId}/chats/${crowded.id}/events`, w.tokens[i % 10]));
    await sleep(3000);
    // The queue changes while they hold on: ten entries cancelled and ten sent again.
    for (const id of entries.slice(0, 10)) {
      await api("DELETE", `/v1/projects/${w.projectId}/chats/${crowded.id}/queue/${id}`, w.tokens[0]);
      await api("POST", `/v1/projects/${w.projectId}/chats/${crowded.id}/messages`, w.tokens[0], { content: `again ${"r".repeat(9_900)}` }, { "idempotency-key": randomUUID() });
    }
    await sleep(5000);
    const during = { memory: memory(), heap: await heapUsed(), latency: await latency() };
    for (const s of sockets) s.destroy();
    console.log("2. 100 streams that never read, on a chat whose queue is full (100 × 10,000 characters) and changing");
    const grew = (k) => signed(during.memory[k] - before.memory[k]);
    console.log(
      `   server memory ${mib(before.memory.total)} → ${mib(during.memory.total)} (${grew("total")}: the Worker's workerd ${grew("worker")}, wrangler dev's proxy ${grew("proxy")}); targets: the Worker ≤ +100 MiB, all ≤ +200 MB`,
    );
    console.log(`   the Worker's JS heap ${signed(during.heap - before.heap)}`);
    console.log(
      `   another chat's send, median of 30: ${before.latency.toFixed(1)} ms → ${during.latency.toFixed(1)} ms (${(during.latency / before.latency).toFixed(2)}x); target ≤ 2x\n`,
    );
  } finally {
    await admin("PUT", "/admin/maintenance", { enabled: false });
  }
}

/** 3. The OpenAPI document asked for under 5,000 Host values, against as many asks under one Host (the garbage both make). */
async function hostValues() {
  const get = (host) =>
    new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/v1/openapi.json", headers: { host } }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
  const growth = async (hostOf) => {
    await sleep(2000);
    const [before, heapBefore] = [memory(), await heapUsed()];
    for (let i = 0; i < 5000; i++) await get(hostOf(i));
    await sleep(2000);
    const [after, heapAfter] = [memory(), await heapUsed()];
    return `JS heap ${signed(heapAfter - heapBefore)}, Worker's workerd ${signed(after.worker - before.worker)}`;
  };
  for (let i = 0; i < 200; i++) await get("127.0.0.1");
  const same = await growth(() => "127.0.0.1");
  const distinct = await growth((i) => `host-${i}-${randomUUID()}.example`);
  console.log("3. GET /v1/openapi.json 5,000 times under one Host, then under 5,000 distinct Host values");
  console.log(`   one Host: ${same}`);
  console.log(`   distinct Hosts: ${distinct}; target: no growth beyond the one Host's\n`);
}

/** 4. Failing sends at the full rate: an owner with no credits, 300 sends of 100,000 characters, each failing at once. */
async function failingSends() {
  const w = await newWorld(1, 0);
  const chat = await newChat(w, "failing");
  const content = (i) => `${String(i).padStart(3, "0")} ${"f".repeat(99_996)}`;
  let refused = 0;
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    refused += await sendWhenQueued(w, chat.id, content(i));
  }
  await until(async () => (await api("GET", `/v1/projects/${w.projectId}/chats/${chat.id}`, w.tokens[0])).json.queuedCount === 0, 600_000);
  const took = Date.now() - started;
  await sleep(1000);
  const sent = 300 * 100_000;
  const stored = chatDatabase(chat.id, (db, file) => ({
    file: statSync(file).size,
    text: db.prepare("SELECT COALESCE(SUM(length(CAST(content AS BLOB))), 0) AS n FROM submissions").get().n,
    rows: db.prepare("SELECT COUNT(*) AS n FROM submissions").get().n,
  }));
  console.log("4. 300 sends of 100,000 characters that all fail (no credits), as fast as the queue lets them in");
  console.log(`   sent ${mb(sent)} in ${(took / 1000).toFixed(1)} s (the queue refused ${refused} tries on the way)`);
  console.log(`   stored: submissions' text ${mb(stored.text)} in ${stored.rows} rows, event log ${mb(storedLogBytes(chat.id))}, SQLite file ${mb(stored.file)}\n`);
}

// ---- helpers ----
/** Sends one message, trying again (same key) while the queue is full; how many tries the queue refused. */
async function sendWhenQueued(w, chatId, content) {
  const key = randomUUID();
  for (let refused = 0; ; refused++) {
    const r = await api("POST", `/v1/projects/${w.projectId}/chats/${chatId}/messages`, w.tokens[0], { content }, { "idempotency-key": key });
    if (r.status === 202) return refused;
    if (r.status !== 409) throw new Error(`send: ${r.status} ${r.text}`);
    await sleep(20);
  }
}

async function newWorld(tokens, credits = 1_000_000) {
  const email = `bounded-${randomUUID()}@example.test`;
  const account = must(await admin("POST", "/admin/accounts", { email, password: "bounded-password", credits }), 201);
  const project = must(await admin("POST", "/admin/projects", { name: "bounded", ownerAccountId: account.id }), 201);
  const session = must(await api("POST", "/auth/token", null, { email, password: "bounded-password" }), 200).token;
  const list = [];
  for (let i = 0; i < tokens; i++) {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    list.push(must(await api("POST", "/auth/api-tokens", session, { name: `t${i}`, scopes: ["chat:read", "chat:write"], expiresAt }), 201).token);
  }
  // One more for the follower of the log scenario, whose places the never-reading streams do not hold.
  const follower = must(
    await api("POST", "/auth/api-tokens", session, { name: "follower", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() }),
    201,
  ).token;
  return { projectId: project.id, tokens: list, follower };
}

function must(answer, status) {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer.json;
}

async function newChat(w, title) {
  return (await api("POST", `/v1/projects/${w.projectId}/chats`, w.tokens[0], { title })).json;
}

function admin(method, path, body) {
  return api(method, path, ADMIN, body);
}

/** A stream read to the end, counting the bytes it carries. */
async function follow(w, chatId, token) {
  const abort = new AbortController();
  const r = await fetch(`${base}/v1/projects/${w.projectId}/chats/${chatId}/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  let bytes = 0;
  (async () => {
    for await (const chunk of r.body) bytes += chunk.byteLength;
  })().catch(() => {});
  return { bytes: () => bytes, close: () => abort.abort() };
}

/** A client that asks for a chat's events and never reads a byte of the answer. */
function neverReading(path, token) {
  const socket = connect({ host: "127.0.0.1", port });
  socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
  return socket;
}

async function until(check, ms) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(200);
  }
}

/** The bytes of event data the chat's object stores. */
function storedLogBytes(chatId) {
  const sum = (db, table) => db.prepare(`SELECT COALESCE(SUM(length(CAST(data AS BLOB))), 0) AS n FROM ${table}`).get().n;
  return chatDatabase(chatId, (db) => sum(db, "events") + sum(db, "event_parts"));
}

/** Reads the chat object's SQLite file beside the running server. */
function chatDatabase(chatId, read) {
  const dir = join(state, "v3", "do", "project-chat-ChatRoom");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sqlite"))) {
    const db = new DatabaseSync(join(dir, file), { readOnly: true });
    try {
      if (db.prepare("SELECT id FROM chat").get()?.id !== chatId) continue;
      return read(db, join(dir, file));
    } catch {
      // Not a chat (or not yet created): look on.
    } finally {
      db.close();
    }
  }
  throw new Error(`no stored chat ${chatId}`);
}

/**
 * Resident memory of the server: every process wrangler dev started (total), the workerd that runs the Worker, and
 * the workerd of wrangler dev's own proxy in front of it (a hop production does not have).
 */
function memory() {
  const m = { total: 0, worker: 0, proxy: 0 };
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const pgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgid !== child.pid) continue;
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      m.total += rss;
      if (cmdline.includes("workerd")) m[cmdline.includes(`entry=127.0.0.1:${port}`) ? "proxy" : "worker"] += rss;
    } catch {
      // The process ended meanwhile.
    }
  }
  return m;
}

/** The Worker's JavaScript heap in use, from its inspector: what the code holds (and garbage not yet collected). */
function heapUsed() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port + 1}/ws`, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } });
    ws.on("error", reject);
    ws.on("open", () => ws.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" })));
    ws.on("message", (data) => {
      const message = JSON.parse(data);
      if (message.id !== 1) return;
      ws.close();
      resolve(message.result.usedSize);
    });
  });
}

function git(...args) {
  return spawnSync("git", args, { cwd: projectDir, encoding: "utf8" }).stdout.trim();
}
function mb(bytes) {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
function mib(bytes) {
  return `${(bytes / MiB).toFixed(0)} MiB`;
}
function signed(bytes) {
  return `${bytes >= 0 ? "+" : ""}${(bytes / MiB).toFixed(0)} MiB`;
}
