// A hung-up MCP wait against wrangler dev, as a developer meets it under npm run dev: its client is cut off
// after 2 s, and the wait's stream place must be free again within 15 s. Under wrangler dev a hang-up never
// reaches the Worker as an abort, so it is noticed by the keep-alive writes, which reach the client only
// uncompressed. The server of its own: the scenario turns maintenance on, which the other tests' server must not see.
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
  const state = mkdtempSync(join(tmpdir(), "mcp-hang-up-"));
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
        let freedAfter: number | undefined;
        while (Date.now() - hungUpAt < FREED_WITHIN_MS + 5_000) {
          // The token's eleventh stream: refused 429 while the ten waits hold their places.
          const opened = await fetch(`${worker.base}/v1/projects/${w.projectId}/chats/${chat.id}/events`, { headers: { authorization: `Bearer ${w.token}` } });
          await opened.body?.cancel();
          if (opened.status === 200) {
            freedAfter = Date.now() - hungUpAt;
            break;
          }
          expect(opened.status).toBe(429);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect(freedAfter, "a place was free again").toBeDefined();
        expect(freedAfter!).toBeLessThanOrEqual(FREED_WITHIN_MS);
      } finally {
        await admin(worker, "PUT", "/admin/maintenance", { enabled: false });
      }
    },
    90_000,
  );
});
