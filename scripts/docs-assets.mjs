#!/usr/bin/env node
// Copies the pinned Scalar API reference bundle into dist/docs-assets, the Worker's static assets
// directory (wrangler.jsonc `assets`), so /v1/docs works with no internet. Runs on npm install.
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { projectDir } from "./lib.mjs";

const require = createRequire(join(projectDir, "package.json"));
const bundle = join(dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");
const target = join(projectDir, "dist", "docs-assets");
mkdirSync(target, { recursive: true });
copyFileSync(bundle, join(target, "scalar.js"));
