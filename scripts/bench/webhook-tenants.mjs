#!/usr/bin/env node
// npm run bench:webhooks: webhook tenants under wrangler dev's local queue (docs/performance.md, "Webhook tenants").
//  Project A has 10 endpoints whose receiver never answers, and 30 replies to deliver to each (300 attempts that hang 15 s):
//  how many attempts reach them, and how many connections each endpoint holds at once (the contract bounds it at 10).
//  Project B has one fast receiver and a reply every 3 s for a minute: how long after its event each first attempt arrives.
//  Project C has one receiver that answers 500 at once: when its attempts arrive (the schedule says +5 s, then +5 min).
// `--project DIR` measures another checkout (a git worktree of an earlier commit); `--quick` stops after C's second attempt.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:http";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { projectDir as here, stopWranglerDev, waitUntilUp } from "../lib.mjs";
import { startFreshWorker } from "./fresh-worker.mjs";
import { jsonApi, must } from "./json-api.mjs";

const { values } = parseArgs({ options: { project: { type: "string", default: here }, quick: { type: "boolean", default: false } } });
const projectDir = resolve(values.project);
const port = Number(process.env.BENCH_PORT || 8870);
const base = `http://127.0.0.1:${port}`;
const api = jsonApi(base);
const ADMIN = `tenants-admin-${randomUUID()}`;
const vars = { ADMIN_TOKEN: ADMIN, RATE_LIMIT_PER_MINUTE: "100000000", LOCAL_AGENT_DELAY_MS: "40", WEBHOOK_ALLOW_LOOPBACK: "true" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The receivers: /hang never answers (the Worker gives up after 15 s), /fast answers 200, /fail answers 500.
const arrivals = { hang: 0, fast: [], fail: [] };
// Connections each hanging endpoint holds open now, and the most it held at once; how long one held more than the contract's 10.
const BOUND = 10;
const holding = new Map();
const mostHeld = new Map();
const allHeld = { now: 0, most: 0 };
const overBound = { since: new Map(), longest: 0 };
const receiver = createServer((req, res) => {
  if (req.url.startsWith("/hang")) {
    holding.set(req.url, (holding.get(req.url) ?? 0) + 1);
    mostHeld.set(req.url, Math.max(mostHeld.get(req.url) ?? 0, holding.get(req.url)));
    allHeld.most = Math.max(allHeld.most, ++allHeld.now);
    if (holding.get(req.url) > BOUND && !overBound.since.has(req.url)) overBound.since.set(req.url, Date.now());
    res.on("close", () => {
      holding.set(req.url, holding.get(req.url) - 1);
      allHeld.now--;
      if (holding.get(req.url) > BOUND || !overBound.since.has(req.url)) return;
      overBound.longest = Math.max(overBound.longest, Date.now() - overBound.since.get(req.url));
      overBound.since.delete(req.url);
    });
  }
  let body = "";
  req.setEncoding("utf8");
  req
    .on("data", (d) => (body += d))
    .on("end", () => {
      const at = Date.now();
      if (req.url.startsWith("/hang")) return void arrivals.hang++;
      const event = JSON.parse(body);
      if (req.url.startsWith("/fast")) arrivals.fast.push({ at, eventAt: Date.parse(event.timestamp), id: req.headers["webhook-id"] });
      else arrivals.fail.push({ at, id: req.headers["webhook-id"] });
      res.writeHead(req.url.startsWith("/fast") ? 200 : 500).end();
    });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const hooksAt = `http://127.0.0.1:${receiver.address().port}`;

const { child, state } = startFreshWorker({ name: "webhook-tenants", projectDir, port, vars });
try {
  await waitUntilUp(base, child);
  const [a, b, c] = [await newProject("a"), await newProject("b"), await newProject("c")];
  for (let i = 0; i < 10; i++) await hook(a, `${hooksAt}/hang/${i}`);
  await hook(b, `${hooksAt}/fast`);
  await hook(c, `${hooksAt}/fail`);
  console.log(`\nwebhook tenants on ${projectDir}, receivers at ${hooksAt}\n`);

  const started = Date.now();
  const aChats = await Promise.all(Array.from({ length: 10 }, () => newChat(a)));
  await Promise.all(aChats.flatMap((chat) => [0, 1, 2].map((i) => sendMessage(a, chat, `a ${i}`))));
  await sendMessage(c, await newChat(c), "c");
  const bChat = await newChat(b);
  for (let i = 0; i < 20; i++) {
    await sendMessage(b, bChat, `b ${i}`);
    await sleep(3_000);
  }
  await sleep(10_000);
  const lags = arrivals.fast.map((x) => x.at - x.eventAt).sort((x, y) => x - y);
  const pick = (q) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))];
  console.log(`A: ${arrivals.hang} attempts reached the hanging receivers in the first ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const since of overBound.since.values()) overBound.longest = Math.max(overBound.longest, Date.now() - since);
  console.log(
    `A: connections held at once, at most: ${Math.max(...mostHeld.values())} by one endpoint (${[...mostHeld.values()].join(", ")}), ${allHeld.most} by the ten together; more than ${BOUND} for at most ${overBound.longest} ms`,
  );
  console.log(
    `B: ${lags.length} of 20 first attempts arrived; from event to arrival median ${pick(0.5)} ms, p95 ${pick(0.95)} ms, max ${lags.at(-1)} ms; over 5 s: ${lags.filter((l) => l > 5_000).length}`,
  );
  const wanted = values.quick ? 2 : 3;
  const deadline = Date.now() + (values.quick ? 60_000 : 420_000);
  while (arrivals.fail.length < wanted && Date.now() < deadline) await sleep(1_000);
  const gaps = arrivals.fail.slice(1).map((x, i) => ((x.at - arrivals.fail[i].at) / 1000).toFixed(1));
  console.log(
    `C: ${arrivals.fail.length} attempts, ${new Set(arrivals.fail.map((x) => x.id)).size} webhook-id; gaps between attempts ${gaps.join(" s, ")} s (schedule: 5 s, then 300 s)`,
  );
} finally {
  stopWranglerDev(child);
  receiver.close();
  receiver.closeAllConnections();
  rmSync(state, { recursive: true, force: true });
}

async function newProject(name) {
  const email = `tenants-${name}-${randomUUID()}@example.test`;
  const account = must(await api("POST", "/admin/accounts", ADMIN, { email, password: "tenants-password", credits: 1_000_000 }), 201);
  const project = must(await api("POST", "/admin/projects", ADMIN, { name, ownerAccountId: account.id }), 201);
  const session = must(await api("POST", "/auth/token", null, { email, password: "tenants-password" }), 200).token;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const token = must(await api("POST", "/auth/api-tokens", session, { name: "bench", scopes: ["chat:read", "chat:write"], expiresAt }), 201).token;
  return { id: project.id, token };
}

async function hook(p, url) {
  return must(await api("POST", `/v1/projects/${p.id}/webhooks`, p.token, { url, events: ["message.completed"] }), 201);
}
async function newChat(p) {
  return must(await api("POST", `/v1/projects/${p.id}/chats`, p.token, { title: "tenants" }), 201).id;
}
async function sendMessage(p, chat, content) {
  return must(await api("POST", `/v1/projects/${p.id}/chats/${chat}/messages`, p.token, { content }, { "idempotency-key": randomUUID() }), 202);
}
