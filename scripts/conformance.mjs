#!/usr/bin/env node
// npm run conformance: the black-box suite from ../shared/conformance against a fresh wrangler dev.
// A clone of this repository alone has no ../shared: then it says so and skips, rather than crash.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { projectDir } from "./lib.mjs";

const runner = join(projectDir, "..", "shared", "conformance", "run.mjs");
if (!existsSync(runner)) {
  console.log(`conformance: skipped, ${runner} is not here (the suite lives beside this repository in the steering checkout).`);
  process.exit(0);
}
const { status } = spawnSync(process.execPath, [runner, "--project", projectDir, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(status ?? 1);
