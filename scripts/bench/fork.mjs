#!/usr/bin/env node
// npm run bench:fork: what forking a chat costs, against a fresh wrangler dev (tmpfs unless BENCH_STATE_DIR says
// otherwise). A source chat of 5,000 messages (2,500 exchanges with the built-in agent at no delay) is forked at its
// 100th and at its 5,000th message; each fork's time (the POST's, median of its runs) and its calls to Durable Objects
// (a plan, then a read of the source and a write of the fork per batch, then a read of the fork) are printed. Then,
// while a 5,000-message fork runs, sends to the source: each send's time beside an idle send's, since the source
// answers other calls between two batches and never waits on the copy for more than one read.
import { randomUUID } from "node:crypto";
import { stopWranglerDev, waitUntilUp, projectDir } from "../lib.mjs";
import { seededToken } from "../conformance/harness.mjs";
import { startFreshWorker } from "./fresh-worker.mjs";
import { jsonApi, must } from "./json-api.mjs";

const port = Number(process.env.BENCH_PORT ?? 8860);
const base = `http://127.0.0.1:${port}`;
const ADMIN = `bench-fork-${randomUUID()}`;
const EXCHANGES = 2_500;
// The service's batch of a copy (src/chats/limits.ts): these messages are short, so batches are bounded by count.
const BATCH_MESSAGES = 200;

const { child, state } = startFreshWorker({ name: "fork", projectDir, port, vars: { ADMIN_TOKEN: ADMIN, RATE_LIMIT_PER_MINUTE: "1000000", LOCAL_AGENT_DELAY_MS: "0" } });
try {
  await waitUntilUp(base, child);
  const api = jsonApi(base);
  const { token, projectId } = await seededToken(base, ADMIN, "bench-fork");
  const chats = `/v1/projects/${projectId}/chats`;
  const source = must(await api("POST", chats, token, { title: "a long chat" }), 201).id;
  const sendTo = (chatId, content) => api("POST", `${chats}/${chatId}/messages`, token, { content }, { "idempotency-key": randomUUID() });

  const seeding = performance.now();
  for (let i = 0; i < EXCHANGES; i++) {
    // The queue holds 100 entries: a full one is waited out.
    for (let sent = await sendTo(source, `message ${i}`); sent.status !== 202; sent = await sendTo(source, `message ${i}`)) {
      if (sent.json?.code !== "queue_full") throw new Error(`send: ${sent.status} ${sent.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const history = await oldestFirst(api, token, chats, source, EXCHANGES * 2);
  console.log(`seeded ${history.length} messages in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

  for (const size of [100, 5_000]) {
    const at = history[size - 1].id;
    const runs = [];
    for (let run = 0; run < (size === 100 ? 7 : 3); run++) {
      const started = performance.now();
      must(await api("POST", `${chats}/${source}/fork`, token, { atMessageId: at }, { "idempotency-key": randomUUID() }), 201);
      runs.push(performance.now() - started);
    }
    const batches = Math.ceil(size / BATCH_MESSAGES);
    console.log(
      `fork of ${size} messages: ${median(runs).toFixed(0)} ms median of ${runs.length} (${runs.map((ms) => ms.toFixed(0)).join(", ")}); ${batches} batches, ${2 + 2 * batches} calls to objects`,
    );
  }

  // Sends to the source, idle and while a 5,000-message fork copies it.
  const idle = [];
  for (let i = 0; i < 20; i++) idle.push(await timed(() => sendTo(source, `idle ${i}`)));
  // A send every 10 ms while the fork runs, each timed on its own (none waits for another).
  const sends = [];
  // The same to a chat the fork does not touch: locally every object runs on one thread, so what a send waits for that
  // is not the source's (the copy's writes in the new chat) shows there too.
  const elsewhere = must(await api("POST", chats, token, { title: "elsewhere" }), 201).id;
  const others = [];
  let forking = true;
  const forkStarted = performance.now();
  const forked = api("POST", `${chats}/${source}/fork`, token, { atMessageId: history[4_999].id }, { "idempotency-key": randomUUID() }).finally(() => (forking = false));
  while (forking) {
    sends.push(timed(() => sendTo(source, `during ${sends.length}`)));
    others.push(timed(() => sendTo(elsewhere, `elsewhere ${others.length}`)));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  must(await forked, 201);
  const forkMs = performance.now() - forkStarted;
  const during = await Promise.all(sends);
  const unrelated = await Promise.all(others);
  const perBatch = forkMs / Math.ceil(5_000 / BATCH_MESSAGES);
  console.log(
    `a send to the source: idle p50 ${median(idle).toFixed(0)} ms, max ${Math.max(...idle).toFixed(0)} ms; during a 5,000-message fork (${forkMs.toFixed(0)} ms, ` +
      `${perBatch.toFixed(0)} ms a batch of ${BATCH_MESSAGES}) ${during.length} sends, p50 ${median(during).toFixed(0)} ms, max ${Math.max(...during).toFixed(0)} ms; ` +
      `to a chat the fork does not touch, meanwhile: p50 ${median(unrelated).toFixed(0)} ms, max ${Math.max(...unrelated).toFixed(0)} ms`,
  );
} finally {
  stopWranglerDev(child);
  (await import("node:fs")).rmSync(state, { recursive: true, force: true });
}

async function timed(call) {
  const started = performance.now();
  const answer = await call();
  if (answer.status !== 202 && answer.json?.code !== "queue_full") throw new Error(`${answer.status} ${answer.text}`);
  return performance.now() - started;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The chat's whole history, oldest first, once it holds `count` messages that have ended. */
async function oldestFirst(api, token, chats, chatId, count) {
  for (;;) {
    const items = [];
    for (let cursor; ; ) {
      const page = must(await api("GET", `${chats}/${chatId}/messages?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, token), 200);
      items.push(...page.items);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    if (items.length >= count && items.every((m) => m.status !== "working")) return items.reverse();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
