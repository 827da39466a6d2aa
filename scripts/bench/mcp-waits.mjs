#!/usr/bin/env node
// npm run bench:waits: what MCP send_message calls that wait (waitSeconds 60) cost the service while their replies wait in
// the queue (docs/performance.md, "MCP waits"). For 10, 60 and 300 waits, ten per token, one chat per token:
//  - inner calls: how often the chat objects are asked for a submission, a message, a page, the queue or a chat, counted
//    exactly in the Worker's own isolate through its inspector (a breakpoint on each of those ChatRoom methods whose
//    condition counts and never stops);
//  - the Worker's CPU and memory, and another account's GET chat latency, meanwhile;
//  - after every waiting client hangs up: the inner calls that go on, and how soon each token can open 10 streams again.
// Then one account's 5 tokens sending 300 waits at once: how many are held and how many refused. Last, what the native
// channels cost against their plain twins, in calls to the chat's object (every one of its RPC methods counted): a task's
// tasks/get beside get_submission, an MRTR retry that answers beside answer_question, both waiting the same way.
// `--project DIR` measures another checkout (a git worktree of an earlier commit) with this same script.
import { spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { projectDir as here, stopWranglerDev, waitUntilUp } from "../lib.mjs";
import { percentile } from "./fanout.mjs";
import { startFreshWorker } from "./fresh-worker.mjs";
import { jsonApi, must } from "./json-api.mjs";

const { values } = parseArgs({ options: { project: { type: "string", default: here }, waits: { type: "string", default: "10,60,300" } } });
const projectDir = resolve(values.project);
const port = 8880;
const base = `http://127.0.0.1:${port}`;
const api = jsonApi(base);
const ADMIN = `waits-admin-${randomUUID()}`;
const vars = { ADMIN_TOKEN: ADMIN, RATE_LIMIT_PER_MINUTE: "100000000", LOCAL_AGENT_DELAY_MS: "40", MCP_STATE_KEY: randomBytes(32).toString("base64url") };
const COUNTED = ["submissionState", "message", "messages", "queueEntries", "get"];
// The other methods of the chat object a request may call: with COUNTED, every one.
const ROOM_METHODS_BEYOND = ["submit", "question", "chain", "cancelChain", "follow"];
const WINDOW_MS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { child, state } = startFreshWorker({ name: "waits", projectDir, port, vars });
try {
  await waitUntilUp(base, child);
  const inspector = await countCalls(COUNTED);
  console.log(`\nMCP waits against ${projectDir} (git ${git("rev-parse", "--short", "HEAD")})\n`);
  const other = await newWorld("other", 1);
  const otherChat = await newChat(other, 0);
  // Every send waits in the queue: nothing runs while the waits are measured.
  must(await api("PUT", "/admin/maintenance", ADMIN, { enabled: true }), 200);
  await latency(other, otherChat, 50); // warm
  const idle = await measure(inspector, () => latency(other, otherChat));
  console.log(`no waits: ${line(idle)}\n`);
  for (const n of values.waits.split(",").map(Number)) await heldWaits(n, inspector, other, otherChat);
  await oneAccountsFlood(inspector);
  must(await api("PUT", "/admin/maintenance", ADMIN, { enabled: false }), 200);
  await nativeCosts(await inspector.add(ROOM_METHODS_BEYOND, ["__roomCalls"]));
  inspector.close();
} finally {
  stopWranglerDev(child);
  rmSync(state, { recursive: true, force: true });
}

/** n waits, ten per token and one chat per token; measured while held, then after every client hangs up. */
async function heldWaits(n, inspector, other, otherChat) {
  const tokens = Math.ceil(n / 10);
  const w = await newWorld(`held-${n}`, tokens);
  const chats = await Promise.all(Array.from({ length: tokens }, (_, t) => newChat(w, t)));
  const calls = Array.from({ length: n }, (_, i) => waitingCall(w, i % tokens, chats[i % tokens].id, `wait ${i}`));
  await settled(inspector, calls);
  const refused = calls.filter((c) => c.answered()).length;
  const held = await measure(inspector, () => latency(other, otherChat));
  for (const c of calls) c.hangUp();
  const hungUpAt = Date.now();
  await sleep(2000);
  const after = await measure(inspector, async () => {});
  const freed = await placesFreeAfter(w, chats, hungUpAt, 15_000);
  console.log(`${n} waits (${tokens} tokens, ${n - refused} held, ${refused} answered at once): ${line(held)}`);
  console.log(`   after every client hung up: ${after.callsPerSecond.toFixed(1)} inner calls/s; ${freed}\n`);
}

/** The probe's case: one account's 5 tokens send 300 waits at once. */
async function oneAccountsFlood(inspector) {
  // One account: five tokens of one project.
  const w = await newWorld("flood", 5);
  const chats = await Promise.all(Array.from({ length: 5 }, (_, t) => newChat(w, t)));
  const calls = Array.from({ length: 300 }, (_, i) => waitingCall(w, i % 5, chats[i % 5].id, `flood ${i}`));
  await settled(inspector, calls);
  const answered = calls.filter((c) => c.answered());
  const tooMany = answered.filter((c) => c.text().includes("too_many_streams")).length;
  const held = await measure(inspector, async () => {});
  console.log(`300 waits from one account's 5 tokens: ${300 - answered.length} held, ${tooMany} refused with too_many_streams; ${held.callsPerSecond.toFixed(1)} inner calls/s`);
  for (const c of calls) c.hangUp();
}

/**
 * Until the calls have started: neither an answer nor an inner call for 2 s (a call sends its message and reads its
 * submission once as it starts), or 20 s at most (calls that poll never settle).
 */
async function settled(inspector, calls) {
  const started = Date.now();
  let last = { calls: -1, answered: -1, since: Date.now() };
  while (Date.now() - started < 20_000) {
    const now = { calls: await inspector.count(), answered: calls.filter((c) => c.answered()).length };
    if (now.calls !== last.calls || now.answered !== last.answered) last = { ...now, since: Date.now() };
    else if (Date.now() - last.since >= 2000) return;
    await sleep(250);
  }
}

/** An MCP send_message that waits up to 60 s, answered as JSON; hangUp() drops its connection. */
function waitingCall(w, t, chatId, content) {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "send_message", arguments: { projectId: w.callers[t].projectId, chatId, content, waitSeconds: 60 } },
  });
  let text;
  const req = request(`${base}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${w.tokens[t]}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
  });
  req.on("response", (res) => {
    let chunks = "";
    res.on("data", (d) => (chunks += d));
    res.on("end", () => (text = chunks));
  });
  req.on("error", () => {});
  req.end(body);
  return { answered: () => text !== undefined, text: () => text ?? "", hangUp: () => req.destroy() };
}

/** Over WINDOW_MS while `load` runs: inner calls per second, the Worker's CPU share and memory, and what load returns. */
async function measure(inspector, load) {
  const [calls0, cpu0, t0] = [await inspector.count(), workerCpu(), Date.now()];
  const [latencies] = await Promise.all([load(), sleep(WINDOW_MS)]);
  const [calls1, cpu1, t1] = [await inspector.count(), workerCpu(), Date.now()];
  const seconds = (t1 - t0) / 1000;
  // The latency probe's own GETs are calls too: only the others count.
  return { callsPerSecond: (calls1 - calls0 - (latencies?.length ?? 0)) / seconds, cpu: (cpu1 - cpu0) / seconds, rss: workerRss(), latencies };
}

function line(m) {
  const l = m.latencies ?? [];
  return `${m.callsPerSecond.toFixed(1)} inner calls/s, Worker CPU ${(m.cpu * 100).toFixed(0)}%, RSS ${(m.rss / 2 ** 20).toFixed(0)} MiB; another account's GET chat p50 ${pct(l, 0.5)} ms, p99 ${pct(l, 0.99)} ms`;
}

/** Another account's GET chat, one after another, until the window ends; each latency in ms. */
async function latency(w, chat, most = Number.POSITIVE_INFINITY) {
  const out = [];
  const until = Date.now() + WINDOW_MS;
  while (out.length < most && Date.now() < until) {
    const started = performance.now();
    // A saturated server may not answer at all: such a request counts as the time it was given.
    const r = await fetch(`${base}/v1/projects/${w.callers[0].projectId}/chats/${chat.id}`, {
      headers: { authorization: `Bearer ${w.tokens[0]}` },
      signal: AbortSignal.timeout(30_000),
    }).then(
      (response) => response.text().then(() => response.status),
      () => "timed out",
    );
    if (r !== 200 && r !== "timed out") throw new Error(`GET chat answered ${r}`);
    out.push(performance.now() - started);
  }
  return out;
}

/** Whether every token of w can open its 10 streams again `ms` after the hang-up (each opened and closed at once). */
async function placesFreeAfter(w, chats, hungUpAt, ms) {
  await sleep(Math.max(0, hungUpAt + ms - Date.now()));
  let full = 0;
  for (const t of w.tokens.keys()) {
    const opened = await Promise.all(Array.from({ length: 10 }, () => openStream(w, t, chats[t].id)));
    for (const o of opened) o.close();
    if (!opened.every((o) => o.status === 200)) full++;
  }
  return full === 0 ? `every token could open 10 streams again ${ms / 1000} s later` : `${full} of ${w.tokens.length} tokens still held places ${ms / 1000} s later`;
}

async function openStream(w, t, chatId) {
  const abort = new AbortController();
  const timeout = setTimeout(() => abort.abort(), 30_000);
  const r = await fetch(`${base}/v1/projects/${w.callers[t].projectId}/chats/${chatId}/events`, {
    headers: { authorization: `Bearer ${w.tokens[t]}` },
    signal: abort.signal,
  }).catch(() => ({ status: "timed out", text: async () => "" }));
  clearTimeout(timeout);
  if (r.status !== 200) await r.text();
  return { status: r.status, close: () => abort.abort() };
}

/**
 * Counts entries into the named methods in the Worker's isolate: a conditional breakpoint whose condition adds one to a
 * global and is false, so nothing stops. count() reads the global.
 */
async function countCalls(methods) {
  const ws = new WebSocket(`ws://127.0.0.1:${port + 1}/ws`, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } });
  const waiting = new Map();
  const scripts = [];
  const contexts = [];
  let id = 0;
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  ws.on("message", (data) => {
    const m = JSON.parse(data);
    if (m.id && waiting.has(m.id)) {
      waiting.get(m.id)(m.result);
      waiting.delete(m.id);
    } else if (m.method === "Debugger.scriptParsed") scripts.push(m.params);
    else if (m.method === "Runtime.executionContextCreated") contexts.push(m.params.context);
  });
  await new Promise((resolve, reject) => ws.on("open", resolve).on("error", reject));
  await send("Runtime.enable");
  await send("Debugger.enable");
  await sleep(500);
  /** Counts entries into these methods in each of `counters` (globals); a method takes one breakpoint, so it is named once. */
  const add = async (names, counters) => {
    let placed = 0;
    for (const script of scripts) {
      const source = (await send("Debugger.getScriptSource", { scriptId: script.scriptId }))?.scriptSource ?? "";
      // The bundle is minified, its class names too, but not the RPC methods': the class that has submissionState is ChatRoom.
      const anchor = source.indexOf("async submissionState(");
      if (anchor < 0) continue;
      const room = source.lastIndexOf("class extends", anchor);
      for (const method of names) {
        const at = source.indexOf("{", source.indexOf(`async ${method}(`, room)) + 1;
        const before = source.slice(0, at);
        const location = { scriptId: script.scriptId, lineNumber: before.split("\n").length - 1, columnNumber: at - before.lastIndexOf("\n") - 1 };
        const bumps = counters.map((counter) => `globalThis.${counter} = (globalThis.${counter} || 0) + 1`).join(", ");
        await send("Debugger.setBreakpoint", { location, condition: `(${bumps}, false)` });
        placed++;
      }
    }
    if (placed !== names.length) throw new Error(`placed ${placed} of ${names.length} counters`);
    const counter = counters.at(-1);
    const count = async () => (await send("Runtime.evaluate", { expression: `globalThis.${counter} ?? 0`, contextId: contexts[0].id })).result.value;
    return { count };
  };
  // The methods the waits are measured by count toward every object call too (below).
  const { count } = await add(methods, ["__roomCalls", "__innerCalls"]);
  return { count, add, close: () => ws.close() };
}

/** `tokens` read+write tokens, from as many accounts as the limit of 20 tokens each takes; each account owns one project. */
async function newWorld(name, tokens) {
  const callers = [];
  while (callers.length < tokens) {
    const email = `${name}-${randomUUID()}@bench.test`;
    const account = must(await api("POST", "/admin/accounts", ADMIN, { email, password: "waits-password", credits: 100000 }), 201);
    const project = must(await api("POST", "/admin/projects", ADMIN, { name, ownerAccountId: account.id }), 201);
    const session = must(await api("POST", "/auth/token", null, { email, password: "waits-password" }), 200).token;
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    for (let i = 0; i < 20 && callers.length < tokens; i++) {
      const token = must(await api("POST", "/auth/api-tokens", session, { name: `t${i}`, scopes: ["chat:read", "chat:write"], expiresAt }), 201).token;
      callers.push({ projectId: project.id, token });
    }
  }
  return { callers, tokens: callers.map((c) => c.token) };
}

async function newChat(w, t) {
  return must(await api("POST", `/v1/projects/${w.callers[t].projectId}/chats`, w.tokens[t], { title: `chat ${t}` }), 201);
}

function pct(list, p) {
  if (!list.length) return "-";
  const sorted = [...list].sort((a, b) => a - b);
  return percentile(sorted, p * 100).toFixed(0);
}

/** The workerd process that runs the Worker (not wrangler's proxy in front of it). */
function workerPid() {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const pgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (pgid === child.pid && cmdline.includes("workerd") && !cmdline.includes(`entry=127.0.0.1:${port}`)) return pid;
    } catch {
      // The process ended meanwhile.
    }
  }
  throw new Error("no workerd process found");
}

/** CPU seconds the Worker's workerd has used. */
function workerCpu() {
  const fields = readFileSync(`/proc/${workerPid()}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function workerRss() {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${workerPid()}/status`, "utf8"))?.[1] ?? 0) * 1024;
}

function git(...args) {
  return spawnSync("git", args, { cwd: projectDir, encoding: "utf8" }).stdout.trim();
}

/** One /mcp request's JSON-RPC answer (JSON, or the last message of an event stream). */
async function mcpCall(token, method, params, { modern, declared = {}, name } = {}) {
  const meta = modern ? { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": declared } : undefined;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (modern) Object.assign(headers, { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}) });
  const r = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: meta ? { ...params, _meta: meta } : params }) });
  const text = await r.text();
  const json = text.trim().startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .at(-1)
        .slice(6);
  return JSON.parse(json);
}

/** The calls to the chat's object that `run` makes. */
async function counted(counter, run) {
  const before = await counter.count();
  const value = await run();
  return { calls: (await counter.count()) - before, value };
}

/** Until the chat's agent has answered everything sent to it (its replies take 40 ms here). */
async function idle(w, chatId) {
  for (let i = 0; i < 100; i++) {
    const chat = must(await api("GET", `/v1/projects/${w.callers[0].projectId}/chats/${chatId}`, w.tokens[0]), 200);
    if (!chat.isWorking && chat.queuedCount === 0) return chat;
    await sleep(100);
  }
  throw new Error("the chat did not settle");
}

/** What a task poll and an MRTR retry cost the chat object, beside the plain calls they stand for. */
async function nativeCosts(counter) {
  const w = await newWorld("native", 1);
  const chat = await newChat(w, 0);
  const [token, projectId] = [w.tokens[0], w.callers[0].projectId];
  const ids = { projectId, chatId: chat.id };
  const tool = (name, args, options) => mcpCall(token, "tools/call", { name, arguments: { ...ids, ...args } }, { name, ...options });
  const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
  const FORM = { elicitation: { form: {} } };

  const sent = await tool("send_message", { content: "hello" });
  await idle(w, chat.id);
  const plainGet = await counted(counter, () => tool("get_submission", { submissionId: sent.result.structuredContent.submission.submissionId }));
  const task = (await tool("send_message", { content: "hello again" }, { modern: true, declared: TASKS })).result;
  await idle(w, chat.id);
  const taskGet = await counted(counter, () => mcpCall(token, "tasks/get", { taskId: task.taskId }, { modern: true, declared: TASKS, name: task.taskId }));
  if (taskGet.value.result?.status !== "completed") throw new Error(`tasks/get: ${JSON.stringify(taskGet.value).slice(0, 300)}`);

  // Plain: a question asked, answered with answer_question waiting for the reply.
  await tool("send_message", { content: "/ask Your name?" });
  const { pendingQuestionId } = await idle(w, chat.id);
  const nulls = { optionIds: null, text: null, decision: null, reason: null, connected: null, decline: null };
  const plainAnswer = await counted(counter, () => tool("answer_question", { questionId: pendingQuestionId, answer: { ...nulls, text: "Ada" }, waitSeconds: 10 }));
  // MRTR: the same question reached by a waiting call, answered by its retry, which then waits for the reply the same way.
  const args = { content: "/ask Your name?", waitSeconds: 10 };
  const first = (await tool("send_message", args, { modern: true, declared: FORM })).result;
  if (first.resultType !== "input_required") throw new Error(`MRTR: ${JSON.stringify(first).slice(0, 300)}`);
  const [questionId] = Object.keys(first.inputRequests);
  const retry = await counted(counter, () =>
    mcpCall(
      token,
      "tools/call",
      { name: "send_message", arguments: { ...ids, ...args }, requestState: first.requestState, inputResponses: { [questionId]: { action: "accept", content: { text: "Ada" } } } },
      { modern: true, declared: FORM, name: "send_message" },
    ),
  );
  if (retry.value.result?.resultType !== "complete") throw new Error(`MRTR retry: ${JSON.stringify(retry.value).slice(0, 300)}`);
  console.log("\nCalls to the chat object per call (every RPC method counted):");
  console.log(`   get_submission ${plainGet.calls}; tasks/get of a completed task ${taskGet.calls}`);
  console.log(`   answer_question waiting for the reply ${plainAnswer.calls}; an MRTR retry answering and waiting for the reply ${retry.calls}`);
}
