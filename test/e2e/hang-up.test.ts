// Hung-up waits and event streams against wrangler dev, as a developer meets them under npm run dev: each client
// is cut off after 2 s, and the stream places must be free again within 15 s. Under wrangler dev a hang-up reaches
// the Worker only as a failed write: an MCP wait notices it by its keep-alive writes, which reach the client only
// uncompressed; an event stream by its pulse's keep-alive, the Worker's abort then ending it in the chat's object.
// The server of its own: the MCP scenario turns maintenance on, which the other tests' server must not see.
import { mkdtempSync, rmSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: the project's scripts are JavaScript
import { applyLocalMigrations, freePort, startWranglerDev, stopWranglerDev, waitUntilUp } from "../../scripts/lib.mjs";
import { admin, type Worker, world } from "../../client/test/world.ts";

const HANG_UP_AFTER_MS = 2_000;
const FREED_WITHIN_MS = 15_000;
let worker: Worker;
let stop: () => void;

beforeAll(async () => {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const state = mkdtempSync(join(tmpdir(), "hang-up-"));
  const adminToken = `hang-up-admin-${crypto.randomUUID()}`;
  applyLocalMigrations(["--persist-to", state], { quiet: true });
  const server = startWranglerDev({
    port,
    inspectorPort,
    quiet: true,
    extraArgs: ["--persist-to", state, "--log-level", "error", "--env-file", devNull, "--var", `ADMIN_TOKEN:${adminToken}`],
  });
  worker = { base: `http://127.0.0.1:${port}`, adminToken };
  stop = () => {
    stopWranglerDev(server);
    rmSync(state, { recursive: true, force: true });
  };
  await waitUntilUp(worker.base, server);
}, 120_000);

afterAll(() => stop?.());

/** Milliseconds from the hang-up until the token's eleventh stream opens (refused 429 while ten hold their places). */
async function placeFreedAfter(w: { projectId: string; token: string }, chatId: string, hungUpAt: number): Promise<number> {
  while (Date.now() - hungUpAt < FREED_WITHIN_MS + 5_000) {
    const opened = await fetch(`${worker.base}/v1/projects/${w.projectId}/chats/${chatId}/events`, { headers: { authorization: `Bearer ${w.token}` } });
    await opened.body?.cancel();
    if (opened.status === 200) return Date.now() - hungUpAt;
    expect(opened.status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`no place was free ${FREED_WITHIN_MS + 5_000} ms after the hang-up`);
}

describe("an MCP wait whose client hangs up, under wrangler dev", () => {
  it.each([
    ["a JSON answer", false],
    ["an event stream (progress asked)", true],
  ])(
    `frees its stream place within ${FREED_WITHIN_MS / 1000} s: %s`,
    async (_, progress) => {
      const w = await world(worker);
      const chat = await w.client.chats.create(w.projectId, { title: "hang-up" });
      // Maintenance keeps every submission queued, so each wait would last its whole minute.
      await admin(worker, "PUT", "/admin/maintenance", { enabled: true });
      try {
        const call = (i: number, signal: AbortSignal) =>
          fetch(`${worker.base}/mcp`, {
            method: "POST",
            signal,
            headers: {
              authorization: `Bearer ${w.token}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-06-18",
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: i,
              method: "tools/call",
              // With a progress token the answer is an event stream; without, JSON kept alive with white space.
              params: {
                name: "send_message",
                arguments: { projectId: w.projectId, chatId: chat.id, content: `wait ${i}`, waitSeconds: 60 },
                ...(progress ? { _meta: { progressToken: i } } : {}),
              },
            }),
          })
            .then((r) => r.text())
            .catch(() => "hung up");
        const cut = Array.from({ length: 10 }, (_, i) => {
          const client = new AbortController();
          setTimeout(() => client.abort(), HANG_UP_AFTER_MS);
          return call(i, client.signal);
        });
        await new Promise((resolve) => setTimeout(resolve, HANG_UP_AFTER_MS + 100));
        const hungUpAt = Date.now();
        expect(await Promise.all(cut)).toEqual(Array(10).fill("hung up"));
        expect(await placeFreedAfter(w, chat.id, hungUpAt)).toBeLessThanOrEqual(FREED_WITHIN_MS);
      } finally {
        await admin(worker, "PUT", "/admin/maintenance", { enabled: false });
      }
    },
    90_000,
  );
});

describe("event streams whose client hangs up, under wrangler dev", () => {
  it(`free their stream places within ${FREED_WITHIN_MS / 1000} s`, async () => {
    const w = await world(worker);
    const chat = await w.client.chats.create(w.projectId, { title: "hang-up" });
    const clients = Array.from({ length: 10 }, () => new AbortController());
    for (const client of clients) {
      const opened = await fetch(`${worker.base}/v1/projects/${w.projectId}/chats/${chat.id}/events`, { signal: client.signal, headers: { authorization: `Bearer ${w.token}` } });
      expect(opened.status).toBe(200);
      opened
        .body!.getReader()
        .read()
        .catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, HANG_UP_AFTER_MS));
    const hungUpAt = Date.now();
    for (const client of clients) client.abort();
    expect(await placeFreedAfter(w, chat.id, hungUpAt)).toBeLessThanOrEqual(FREED_WITHIN_MS);
  }, 60_000);
});
