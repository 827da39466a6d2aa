#!/usr/bin/env node
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { projectDir, stopWranglerDev, waitUntilUp } from "../lib.mjs";
import { startFreshWorker } from "./fresh-worker.mjs";
import { must } from "./json-api.mjs";

const { values } = parseArgs({ options: { chunks: { type: "string", default: "1000" }, gap: { type: "string", default: "10" }, replies: { type: "string", default: "3" } } });
const CHUNKS = Number(values.chunks);
const GAP_MS = Number(values.gap);
const REPLIES = Number(values.replies);
const port = 8870;
const base = `http://127.0.0.1:${port}`;
const ADMIN = `model-admin-${randomUUID()}`;

// The stand-in: every chunk "cNNNN " is recorded with the moment it was written.
const written = new Map();
const standIn = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish = null) =>
      res.write(`data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    const reply = randomUUID().slice(0, 4);
    chunk({ role: "assistant", content: "" });
    let i = 0;
    const timer = setInterval(() => {
      if (i === CHUNKS) {
        clearInterval(timer);
        chunk({}, "stop");
        res.end("data: [DONE]\n\n");
        return;
      }
      const text = `${reply}-${String(i++).padStart(4, "0")} `;
      written.set(text, performance.now());
      chunk({ content: text });
    }, GAP_MS);
  });
});
await new Promise((resolve) => standIn.listen(0, "127.0.0.1", resolve));
const vars = {
  ADMIN_TOKEN: ADMIN,
  AGENT_MODE: "openai",
  AGENT_BASE_URL: `http://127.0.0.1:${standIn.address().port}/v1`,
  AGENT_MODEL: "bench",
  AGENT_API_KEY: "sk-bench",
};

const { child, state } = startFreshWorker({ name: "model", projectDir, port, vars });
try {
  await waitUntilUp(base, child);
  const w = await newWorld();
  console.log(`\na model reply of ${CHUNKS} chunks, one every ${GAP_MS} ms, ${REPLIES} times (state on ${state})\n`);
  console.log("reply  deltas  chat events  writes  delta latency p50 / p99 / max (ms)");
  for (let n = 1; n <= REPLIES; n++) {
    const chat = must(await api("POST", `/v1/projects/${w.projectId}/chats`, { title: `model ${n}` }, {}, w.token), 201);
    const events = await follow(w, chat.id);
    must(await api("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/messages`, { content: "write" }, { "idempotency-key": randomUUID() }, w.token), 202);
    const done = await events.until((e) => e.type === "message" && e.data.role === "owner" && e.data.status !== "working", 120_000);
    events.close();
    const replyId = done.data.id;
    const deltas = events.list.filter((e) => e.type === "message.delta" && e.data.id === replyId);
    const chatEvents = events.list.filter((e) => e.type === "chat" && e.at >= deltas[0].at);
    const late = [];
    for (const delta of deltas) for (const piece of delta.data.text.split(/(?<= )/)) if (written.has(piece)) late.push(delta.at - written.get(piece));
    late.sort((a, b) => a - b);
    const at = (q) => late[Math.min(late.length - 1, Math.floor(q * late.length))].toFixed(0);
    if (late.length !== CHUNKS || done.data.status !== "success") throw new Error(`reply ${n}: ${done.data.status}, ${late.length} of ${CHUNKS} chunks seen`);
    // Each batch: the reply's UPDATE and its event's INSERT; each chat event one INSERT more.
    console.log(
      `${String(n).padEnd(7)}${String(deltas.length).padEnd(8)}${String(chatEvents.length).padEnd(13)}${String(2 * deltas.length + chatEvents.length).padEnd(8)}${at(0.5)} / ${at(0.99)} / ${late.at(-1).toFixed(0)}`,
    );
  }
} finally {
  stopWranglerDev(child);
  standIn.close();
  rmSync(state, { recursive: true, force: true });
}

async function newWorld() {
  const email = `model-${randomUUID()}@example.test`;
  const account = must(await api("POST", "/admin/accounts", { email, password: "model-password", credits: 1000 }, {}, ADMIN), 201);
  const project = must(await api("POST", "/admin/projects", { name: "model", ownerAccountId: account.id }, {}, ADMIN), 201);
  const session = must(await api("POST", "/auth/token", { email, password: "model-password" }), 200).token;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const token = must(await api("POST", "/auth/api-tokens", { name: "bench", scopes: ["chat:read", "chat:write"], expiresAt }, {}, session), 201).token;
  return { projectId: project.id, token };
}

async function api(method, path, body, headers = {}, token) {
  const bearer = token;
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body ? { "content-type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, text, json: text ? JSON.parse(text) : undefined };
}

/** The chat's events as they arrive, each stamped with performance.now() when its frame was complete. */
async function follow(w, chatId) {
  const abort = new AbortController();
  const r = await fetch(`${base}/v1/projects/${w.projectId}/chats/${chatId}/events`, { headers: { authorization: `Bearer ${w.token}` }, signal: abort.signal });
  const list = [];
  const waiters = new Set();
  (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const bytes of r.body) {
      const now = performance.now();
      buffer += decoder.decode(bytes, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (type && data) list.push({ type, data: JSON.parse(data), at: now });
        for (const waiter of waiters) waiter();
        end = buffer.indexOf("\n\n");
      }
    }
  })().catch(() => {});
  return {
    list,
    close: () => abort.abort(),
    until: (check, ms) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("timed out")), ms);
        const look = () => {
          const found = list.find(check);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(look);
          resolve(found);
        };
        waiters.add(look);
        look();
      }),
  };
}
