#!/usr/bin/env node
// npm run conformance:mcp: the MCP maintainers' conformance suite (@modelcontextprotocol/conformance, server mode) against
// a fresh wrangler dev, at both revisions it has requirement sets for. The suite sends no credentials, so a small loopback
// proxy adds a personal API token of a seeded account to each request (and nothing else). The checks that do not apply
// here (docs/conformance.md) are its expected failures; any other failure fails the run.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { projectDir, stopWranglerDev, waitUntilUp } from "./lib.mjs";
import { startFreshWorker } from "./bench/fresh-worker.mjs";
import { exited, seededToken, startTokenProxy } from "./conformance/harness.mjs";

const REVISIONS = ["2026-07-28", "2025-11-25"];
const port = Number(process.env.CONFORMANCE_MCP_PORT ?? 8890);
const proxyPort = port + 10;
const base = `http://127.0.0.1:${port}`;
const ADMIN = `mcp-conformance-${randomUUID()}`;
// The suite's scenarios send many requests a minute, so the limit is lifted; its DNS-rebinding check calls as a page of the
// address it was given, which (as any browser page that may call /mcp) must be one of APP_ORIGINS.
const vars = {
  ADMIN_TOKEN: ADMIN,
  RATE_LIMIT_PER_MINUTE: "100000",
  MCP_STATE_KEY: randomBytes(32).toString("base64url"),
  APP_ORIGINS: `http://127.0.0.1:${proxyPort}`,
};

const { child, state } = startFreshWorker({ name: "mcp-conformance", projectDir, port, vars });
let proxy;
let failed = 0;
try {
  await waitUntilUp(base, child);
  const { token } = await seededToken(base, ADMIN, "mcp-conformance");
  proxy = await startTokenProxy({ port, proxyPort, token });
  for (const revision of REVISIONS) {
    console.log(`\n@modelcontextprotocol/conformance, server, --requirements ${revision}`);
    const output = process.env.CONFORMANCE_MCP_OUTPUT ? join(process.env.CONFORMANCE_MCP_OUTPUT, revision) : undefined;
    if (output) mkdirSync(output, { recursive: true });
    // Not spawnSync: the proxy serves the suite's requests from this process's event loop meanwhile.
    const status = await exited(
      spawn(
        "npx",
        [
          "conformance",
          "server",
          "--url",
          `http://127.0.0.1:${proxyPort}/mcp`,
          "--requirements",
          revision,
          "--expected-failures",
          join(projectDir, `scripts/conformance/mcp-expected-failures-${revision}.yaml`),
          ...(output ? ["-o", output] : []),
        ],
        { cwd: projectDir, stdio: "inherit" },
      ),
    );
    if (status !== 0) failed++;
  }
} finally {
  proxy?.close();
  stopWranglerDev(child);
  rmSync(state, { recursive: true, force: true });
}
console.log(
  failed ? `\nconformance:mcp: ${failed} of ${REVISIONS.length} requirement sets had failures beyond the expected ones.` : "\nconformance:mcp: every check that applies passed.",
);
process.exit(failed ? 1 : 0);
