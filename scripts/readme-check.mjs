#!/usr/bin/env node
// npm run readme-check: runs the ```sh blocks of the README and then of the guides it maps (docs/guide/*.md, in the
// order of its links, then docs/operations.md), in order, in one bash shell, against a fresh `npm run dev`, as a
// newcomer would on a fresh clone, and times the first reply (npm run dev ready to the end of the README's blocks,
// under 2 minutes); then, in a new shell, the quickstart of the front door that server shows at /.
// The clone is a copy of this working tree's files (git's tracked and untracked, not ignored ones: no .wrangler state,
// no .dev.vars) with node_modules linked, its dev server on a free port (DEV_PORT is set, which npm run token, admin
// and seed follow; the blocks reach it through the BASE that npm run token prints, so one that names 8787 fails).
// A block preceded by `<!-- readme-check: skip: <reason> -->` is not run; the check lists it with its reason.
// A one-line command whose comment is its output (`… | head -1   # HTTP/1.1 204 No Content`, `… | jq .code   # "unauthorized"`,
// `# "Pro", "Equipo"` for two lines, `… | jq -c .   # {"balance":995}`) must print exactly that. Fails on the first
// command that fails (bash -e), naming its block.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, projectDir, stopWranglerDev } from "./lib.mjs";

const SKIP = /^<!-- readme-check: skip: (.+) -->$/;
const MINUTES = 6;

/** The README's ```sh blocks with the line each starts on and, for a skipped one, the reason it gives. */
export function shellBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```sh") continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`README.md line ${i + 1}: a \`\`\`sh block that never closes`);
    let previous = i - 1;
    while (previous >= 0 && lines[previous].trim() === "") previous--;
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join("\n"), skip: lines[previous]?.trim().match(SKIP)?.[1] });
    i = end;
  }
  return blocks;
}

/** A copy of the working tree as git would clone it (plus files not yet committed), with node_modules linked. */
function freshClone() {
  const dir = mkdtempSync(join(tmpdir(), "readme-check-"));
  const files = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: projectDir, encoding: "utf8" });
  if (files.status !== 0) throw new Error(`git ls-files failed: ${files.stderr}`);
  for (const file of files.stdout.split("\0").filter(Boolean)) {
    try {
      cpSync(join(projectDir, file), join(dir, file), { recursive: false });
    } catch (error) {
      if (error.code !== "ENOENT") throw error; // a tracked file deleted in the working tree
    }
  }
  symlinkSync(join(projectDir, "node_modules"), join(dir, "node_modules"));
  // What npm install's postinstall does: the offline API reference's bundle.
  cpSync(join(projectDir, "dist"), join(dir, "dist"), { recursive: true });
  return dir;
}

/** Starts `npm run dev` in dir and resolves once it says it is ready (migrated, seeded). */
function startDev(dir, env) {
  const child = spawn("npm", ["run", "dev"], { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run dev was not ready within 2 minutes:\n${output}`)), 120_000);
    const take = (chunk) => {
      output += chunk;
      if (/^Ready: /m.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
      if (/^Could not load the demo data/m.test(output)) reject(new Error(output));
    };
    child.stdout.setEncoding("utf8").on("data", take);
    child.stderr.setEncoding("utf8").on("data", take);
    child.on("exit", (code) => reject(new Error(`npm run dev exited (${code}):\n${output}`)));
  });
  return { child, ready, lines: () => output.split("\n").length - 1 };
}

// A trailing comment that is an HTTP status line, JSON strings separated by ", " (one output line each), or one line
// of compact JSON with nothing left out (no "…").
const STATED_OUTPUT = /^(?<command>[^#].*?)\s+# (?<output>HTTP\/1\.1 \d{3}[ A-Za-z]*|"[^"]*"(?:, "[^"]*")*|\{[^…]*\})$/;
const quote = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The block's lines, each one-line command that states its output piped into a comparison with it. */
export function withStatedOutputs(code) {
  const lines = code.split("\n");
  return lines
    .map((line, i) => {
      const stated = i > 0 && lines[i - 1].endsWith("\\") ? null : line.match(STATED_OUTPUT);
      if (!stated) return line;
      const { output } = stated.groups;
      const expected = output.startsWith('"') ? output.split(", ").join("\n") : output;
      return `${stated.groups.command} | stated_output ${quote(expected)}`;
    })
    .join("\n");
}

/** One bash script: each block announced by where it is written, the first failing command ending the run. */
function script(blocks) {
  const parts = [
    "set -e",
    `trap 'echo "readme-check: the command above failed (exit $?) in the block at $BLOCK"' ERR`,
    `stated_output() { local out; out=$(tr -d '\\r'); printf '%s\\n' "$out"; [[ "$out" == "$1" ]] || { printf 'readme-check: the README says it prints:\\n%s\\n' "$1"; return 1; }; }`,
  ];
  blocks.forEach((block, i) => {
    parts.push(`BLOCK=${quote(block.where)}`, `echo; echo ${quote(`━━ ${block.where}`)}`, withStatedOutputs(block.code));
    if (block.endsFirstReply && !blocks.slice(i + 1).some((b) => b.endsFirstReply)) parts.push(timedFirstReply);
  });
  parts.push("echo", "echo readme-check: every block ran");
  return `${parts.join("\n")}\n`;
}

/** The README, then each guide it links in the order it first links them, then the operations page. */
export function documents(readme) {
  const guides = [...new Set([...readme.matchAll(/\]\((docs\/guide\/[a-z0-9-]+\.md)\)/g)].map((m) => m[1]))];
  return ["README.md", ...guides, "docs/operations.md"];
}

// The first reply, from npm run dev ready to the end of the README's own blocks, in milliseconds at most.
const FIRST_REPLY_MS = 120_000;
const timedFirstReply = [
  "FIRST_REPLY_MS=$(( $(date +%s%3N) - READY_AT ))",
  'echo "readme-check: the first reply came ${FIRST_REPLY_MS} ms after npm run dev was ready"',
  `(( FIRST_REPLY_MS <= ${FIRST_REPLY_MS} )) || { echo "readme-check: that is over ${FIRST_REPLY_MS / 1000} s"; false; }`,
].join("\n");

/** The code blocks of the front door's HTML, as a shell gets them when they are copied from the page. */
export function frontDoorBlocks(html) {
  const fromHtml = (text) => text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&amp;", "&");
  return [...html.matchAll(/<pre>([\s\S]*?)<\/pre>/g)].map((m, i) => ({ where: `the front door's block ${i + 1}`, code: fromHtml(m[1]) }));
}

/** Runs a script in dir with bash, stopping it (and what it left in the background) after MINUTES; resolves to its exit code. */
async function runScript(dir, name, text, env) {
  writeFileSync(join(dir, name), text);
  const bash = spawn("bash", [name], { cwd: dir, env, stdio: "inherit", detached: true });
  const timer = setTimeout(() => {
    console.error(`readme-check: still running after ${MINUTES} minutes; stopping it`);
    process.kill(-bash.pid, "SIGTERM");
  }, MINUTES * 60_000);
  const status = await new Promise((resolve) => bash.on("exit", (code) => resolve(code ?? 1)));
  clearTimeout(timer);
  try {
    process.kill(-bash.pid, "SIGTERM"); // anything a block left running in the background
  } catch {}
  return status;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const files = documents(readFileSync(join(projectDir, "README.md"), "utf8"));
  const blocks = files.flatMap((file) => shellBlocks(readFileSync(join(projectDir, file), "utf8")).map((b) => ({ ...b, file })));
  const runnable = blocks.filter((b) => !b.skip);
  for (const b of blocks.filter((b) => b.skip)) console.log(`skipped: ${b.file} line ${b.line}: ${b.skip}`);
  const dir = freshClone();
  const port = await freePort();
  const env = { ...process.env, DEV_PORT: String(port) };
  delete env.ADMIN_TOKEN; // a fresh clone's first `npm run dev` writes its own to .dev.vars
  console.log(`A fresh copy in ${dir}; npm run dev on port ${port}; ${runnable.length} of ${blocks.length} sh blocks of ${files.join(", ")} to run.`);
  const dev = startDev(dir, env);
  let status = 1;
  try {
    await dev.ready;
    console.log(`npm run dev printed ${dev.lines()} lines until ready.`);
    const readyAt = String(Date.now());
    const ordered = runnable.map((b) => ({ where: `${b.file} line ${b.line}`, code: b.code, endsFirstReply: b.file === "README.md" }));
    status = await runScript(dir, ".readme-check.sh", script(ordered), { ...env, READY_AT: readyAt });
    if (status === 0) {
      // After the README's blocks, so that the figures they state count only their own work.
      const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: "text/html" } });
      const front = frontDoorBlocks(await page.text());
      console.log(`\nThe front door's quickstart (http://127.0.0.1:${port}/), in a new shell: ${front.length} blocks.`);
      if (front.length === 0) throw new Error("the front door shows no code blocks");
      status = await runScript(dir, ".front-door-check.sh", script(front), env);
    }
  } catch (error) {
    console.error(error.message);
  } finally {
    stopWranglerDev(dev.child);
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = status;
}
