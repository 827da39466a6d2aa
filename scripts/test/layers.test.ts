// The layer rules (biome.json: noRestrictedImports per folder, noImportCycles): probe files in a copy of the tree's folders, linted with the project's configuration.
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const project = resolve(import.meta.dirname, "../..");
const biome = join(project, "node_modules/.bin/biome");

// Each probe imports one module from where it sits: [probe path, specifier].
const REFUSED = [
  ["src/db/probe.ts", "../chats/schemas"],
  ["src/http/probe.ts", "../mcp/tools"],
  ["src/auth/probe.ts", "../credits/schemas"],
  ["src/projects/probe.ts", "../webhooks/schemas"],
  ["src/catalog/probe.ts", "../chats/event-registry"],
  ["src/agent/probe.ts", "../chats/question-schemas"],
  ["src/credits/probe.ts", "../chats/schemas"],
  ["src/chats/probe.ts", "../mcp/tools"],
  ["src/chats/api/probe.ts", "../room/chat-room"],
  ["src/chats/list/probe.ts", "../room/room-storage"],
  ["src/chats/room/probe.ts", "../../webhooks/delivery"],
  ["src/webhooks/probe.ts", "../chats/room/chat-room"],
  ["src/mcp/probe.ts", "../chats/room/chat-room"],
  ["src/probe.ts", "./chats/room/chat-room"],
] as const;
const ALLOWED = [
  ["src/index.ts", "./chats/room/chat-room"],
  ["src/chats/room/probe-allowed.ts", "./streams"],
  ["src/chats/api/probe-allowed.ts", "../room-calls"],
  ["src/webhooks/probe-allowed.ts", "../chats/webhook-task"],
  ["src/mcp/probe-allowed.ts", "../chats/schemas"],
  ["src/db/probe-allowed.ts", "../auth/scopes"],
] as const;

let tree: string;
let refusedFiles: Set<string>;
let cycleFiles: Set<string>;

beforeAll(async () => {
  tree = await mkdtemp(join(tmpdir(), "layers-"));
  await copyFile(join(project, "biome.json"), join(tree, "biome.json"));
  for (const [path, specifier] of [...REFUSED, ...ALLOWED]) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), `export type { Probe } from "${specifier}";\n`);
  }
  // Two modules that import each other (noImportCycles).
  await writeFile(join(tree, "src/first.ts"), 'import { second } from "./second";\nexport const first = () => second;\n');
  await writeFile(join(tree, "src/second.ts"), 'import { first } from "./first";\nexport const second = () => first;\n');
  const linted = await run(biome, ["lint", "--vcs-enabled=false", "--max-diagnostics=none", "src"], { cwd: tree }).then(
    (done) => done.stdout + done.stderr,
    (failed) => `${failed.stdout}${failed.stderr}`,
  );
  const flagged = (rule: string) => new Set([...linted.matchAll(new RegExp(`^(src/\\S+?):\\d+:\\d+ lint/${rule}`, "gm"))].map((m) => m[1]!));
  refusedFiles = flagged("style/noRestrictedImports");
  cycleFiles = flagged("suspicious/noImportCycles");
}, 60_000);

afterAll(() => rm(tree, { recursive: true, force: true }));

describe("the layer rules in npm run check", () => {
  it("refuses modules that import each other", () => {
    expect(cycleFiles).toEqual(new Set(["src/first.ts", "src/second.ts"]));
  });

  it.each(REFUSED)("refuses %s importing %s", (path) => {
    expect(refusedFiles).toContain(path);
  });

  it.each(ALLOWED)("lets %s import %s", (path) => {
    expect(refusedFiles).not.toContain(path);
  });
});
