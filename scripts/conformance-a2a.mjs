#!/usr/bin/env node
// npm run conformance:a2a: the A2A maintainers' TCK (a2aproject/a2a-tck, branch 1.0-dev; not on npm, so a check you run
// with a checkout of it, not a CI step) against a fresh wrangler dev, both bindings. The TCK sends no credentials, so a
// small loopback proxy adds a personal API token of a seeded account to each request; PUBLIC_URL is the proxy's address,
// so the card's interfaces lead the TCK back through it. Its pytest runs from the checkout's virtualenv:
//   A2A_TCK_DIR=/path/to/a2a-tck npm run conformance:a2a [-- pytest args]
// What it reports and what does not apply here: docs/conformance.md.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startFreshWorker } from "./bench/fresh-worker.mjs";
import { exited, seededToken, startTokenProxy } from "./conformance/harness.mjs";
import { projectDir, stopWranglerDev, waitUntilUp } from "./lib.mjs";

const tckDir = process.env.A2A_TCK_DIR;
const python = tckDir && join(tckDir, ".venv/bin/python");
if (!tckDir || !existsSync(join(tckDir, "tests/compatibility")) || !existsSync(python)) {
  console.error("Set A2A_TCK_DIR to a checkout of a2aproject/a2a-tck (branch 1.0-dev) with its dependencies in .venv (see docs/conformance.md).");
  process.exit(2);
}
const port = Number(process.env.CONFORMANCE_A2A_PORT ?? 8870);
const proxyPort = port + 10;
const base = `http://127.0.0.1:${port}`;
const ADMIN = `a2a-conformance-${randomUUID()}`;
// The TCK sends many requests a minute; its push tests post to a receiver on loopback.
const vars = {
  ADMIN_TOKEN: ADMIN,
  RATE_LIMIT_PER_MINUTE: "100000",
  PUBLIC_URL: `http://127.0.0.1:${proxyPort}`,
  WEBHOOK_KEY: randomBytes(32).toString("base64url"),
  WEBHOOK_ALLOW_LOOPBACK: "true",
};

const { child, state } = startFreshWorker({ name: "a2a-conformance", projectDir, port, vars });
let proxy;
let status = 1;
try {
  await waitUntilUp(base, child);
  const { token, projectId } = await seededToken(base, ADMIN, "a2a-conformance");
  proxy = await startTokenProxy({ port, proxyPort, token });
  const sutHost = `http://127.0.0.1:${proxyPort}/a2a/projects/${projectId}`;
  console.log(`A2A TCK against ${sutHost}`);
  status = await exited(
    spawn(
      python,
      ["-m", "pytest", "tests/compatibility/", `--sut-host=${sutHost}`, "--webhook-host=127.0.0.1", "--tb=short", "-q", "-p", "no:cacheprovider", ...process.argv.slice(2)],
      { cwd: tckDir, stdio: "inherit" },
    ),
  );
} finally {
  proxy?.close();
  stopWranglerDev(child);
  rmSync(state, { recursive: true, force: true });
}
process.exit(status);
