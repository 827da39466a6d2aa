// The client's tests run against the real Worker: wrangler dev on fresh local state and free ports, started once for them.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error: the project's scripts are JavaScript
import { applyLocalMigrations, ensureChromium, forgetDevServer, freePort, recordDevServer, startWranglerDev, stopWranglerDev, waitUntilUp } from "../../scripts/lib.mjs";

export default async function setup(project: TestProject) {
  // Here rather than in the browser test, so that installing it counts against no test's timeout.
  const chromium: string = ensureChromium();
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const state = mkdtempSync(join(tmpdir(), "client-tests-"));
  const adminToken = `client-admin-${randomBytes(12).toString("hex")}`;
  applyLocalMigrations(["--persist-to", state], { quiet: true });
  // PUBLIC_URL: the OAuth issuer for /mcp's connector flow (test/e2e).
  const vars = { ADMIN_TOKEN: adminToken, LOCAL_AGENT_DELAY_MS: "2000", RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_ALLOW_LOOPBACK: "true", PUBLIC_URL: `http://127.0.0.1:${port}` };
  const server = startWranglerDev({
    port,
    inspectorPort,
    quiet: true,
    // --env-file: only the named (empty) file, never the developer's .dev.vars or .env: these vars are the whole configuration.
    extraArgs: ["--persist-to", state, "--log-level", "error", "--env-file", devNull, ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`])],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(base, server).catch((error: unknown) => {
    stopWranglerDev(server);
    throw error;
  });
  // npm run token (scripts/test/token.test.ts) talks to it as to npm run dev on DEV_PORT.
  recordDevServer(port, server);
  project.provide("base", base);
  project.provide("adminToken", adminToken);
  project.provide("chromium", chromium);
  return () => {
    forgetDevServer(port, server);
    stopWranglerDev(server);
    rmSync(state, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    base: string;
    adminToken: string;
    chromium: string;
  }
}
