#!/usr/bin/env node
// node scripts/bundle-check.mjs <dry-run dir>...: fails when a `wrangler deploy --dry-run --outdir` bundle is over the
// size budget or holds two copies of one package (two install paths, as when a devDependency hoists another version
// and the Worker's dependencies each nest their own). Reads index.js and the source map next to it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

// 340 KiB gzip: the Worker stays well inside the free plan's 3 MB and starts fast (docs/performance.md); raised from 300
// for the OAuth provider (about 30 KiB gzip), with the unused AI Gateway provider left out to pay for part of it; then to
// 345 for If-Busy and credit limits per credential (4 KiB gzip: their schemas, the credit count, the account page's form);
// then to 380 for MCP natively (at most 10 KiB gzip: the chain, sealing, tasks and elicitation) and A2A (at most 30);
// back to 350 once the model agent called its provider directly rather than through the AI SDK's core (about 37 KiB gzip).
const BUDGET_GZIP_KIB = 350;

/** Each package in the bundle with the install paths its modules came from. */
function packagesOf(sources) {
  const paths = new Map();
  for (const source of sources) {
    const at = source.lastIndexOf("node_modules/");
    if (at < 0) continue;
    const rest = source.slice(at + "node_modules/".length).split("/");
    const name = rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
    const installed = source.slice(0, at + "node_modules/".length) + name;
    paths.set(name, (paths.get(name) ?? new Set()).add(installed.slice(installed.indexOf("node_modules/"))));
  }
  return paths;
}

let failed = false;
for (const dir of process.argv.slice(2)) {
  const code = readFileSync(join(dir, "index.js"));
  const { sources } = JSON.parse(readFileSync(join(dir, "index.js.map"), "utf8"));
  const gzipKiB = gzipSync(code).length / 1024;
  const duplicates = [...packagesOf(sources)].filter(([, installs]) => installs.size > 1);
  console.log(`${dir}: ${(code.length / 1024).toFixed(0)} KiB, ${gzipKiB.toFixed(1)} KiB gzip (budget ${BUDGET_GZIP_KIB}), ${duplicates.length} duplicate packages`);
  if (gzipKiB > BUDGET_GZIP_KIB) {
    console.error(`  over the budget by ${(gzipKiB - BUDGET_GZIP_KIB).toFixed(1)} KiB gzip`);
    failed = true;
  }
  for (const [name, installs] of duplicates) {
    console.error(`  ${name} is bundled ${installs.size} times: ${[...installs].join(", ")} (npm ls ${name}; a direct dependency on the version the Worker uses hoists one copy)`);
    failed = true;
  }
}
if (failed) process.exitCode = 1;
