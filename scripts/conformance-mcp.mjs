#!/usr/bin/env node
// npm run conformance:mcp: the MCP maintainers' conformance suite (@modelcontextprotocol/conformance, server mode) against
// a fresh wrangler dev, at both revisions it has requirement sets for. The suite sends no credentials, so a small loopback
// proxy adds a personal API token of a seeded account to each request (and nothing else). The checks that do not apply
// here (docs/conformance.md) are its expected failures; any other failure fails the run.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { join } from "node:path";
import { projectDir, stopWranglerDev, waitUntilUp } from "./lib.mjs";
import { startFreshWorker } from "./bench/fresh-worker.mjs";
import { jsonApi, must } from "./bench/json-api.mjs";

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
  const token = await seededToken();
  proxy = await startProxy(token);
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

/** The exit status of a child process, once it has exited. */
function exited(child) {
  return new Promise((resolve) => child.on("close", (code) => resolve(code ?? 1)));
}

/** An account owning a project, and a read+write personal API token of it. */
async function seededToken() {
  const api = jsonApi(base);
  const email = `mcp-conformance-${randomUUID()}@example.test`;
  const account = must(await api("POST", "/admin/accounts", ADMIN, { email, password: "conformance-password", credits: 1000 }), 201);
  must(await api("POST", "/admin/projects", ADMIN, { name: "conformance", ownerAccountId: account.id }), 201);
  const session = must(await api("POST", "/auth/token", null, { email, password: "conformance-password" }), 200).token;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  return must(await api("POST", "/auth/api-tokens", session, { name: "conformance", scopes: ["chat:read", "chat:write"], expiresAt }), 201).token;
}

/** Loopback only: every request as it came, with the token's Authorization added, the answer streamed back as it comes. */
function startProxy(token) {
  const server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers, host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` };
    const forwarded = request({ host: "127.0.0.1", port, path: incoming.url, method: incoming.method, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(proxyPort, "127.0.0.1", () => resolve(server)));
}
