#!/usr/bin/env node
// npm run dev: migrate local D1, start wrangler dev on 127.0.0.1:8787 (or DEV_PORT; PUBLIC_URL defaults to that address), and load the demo data on the first run.
import { devOutputFilter, pipeLines, typesUpToDate } from "./dev-output.mjs";
import {
  LOCAL_INSPECTOR_PORT,
  LOCAL_PORT,
  LOCAL_URL,
  adminClient,
  applyLocalMigrations,
  devVarArgs,
  expect,
  forgetDevServer,
  localAdminToken,
  portIsFree,
  projectDir,
  recordDevServer,
  startWranglerDev,
  waitUntilUp,
} from "./lib.mjs";
import { DEMO, seedDemoData } from "./seed-data.mjs";

// Before anything else: on a port that is taken, wrangler could not serve, and whatever answers there is not this Worker.
for (const [port, what] of [
  [LOCAL_PORT, `Port ${LOCAL_PORT}`],
  [LOCAL_INSPECTOR_PORT, `Port ${LOCAL_INSPECTOR_PORT} (wrangler's debugger port for ${LOCAL_PORT})`],
]) {
  if (!(await portIsFree(port))) {
    console.error(
      `${what} is already in use: stop what listens there, or start on other ports with DEV_PORT=${LOCAL_PORT + 2} npm run dev (its debugger then on ${LOCAL_PORT + 3}), or DEV_INSPECTOR_PORT for the debugger alone.`,
    );
    process.exit(1);
  }
}

const adminToken = localAdminToken();
applyLocalMigrations();
const child = startWranglerDev({ port: LOCAL_PORT, inspectorPort: LOCAL_INSPECTOR_PORT, piped: true, extraArgs: [...devVarArgs(), ...process.argv.slice(2)] });
const filter = devOutputFilter({
  onTypesWarning: (print) =>
    typesUpToDate(projectDir).then((fresh) => {
      if (!fresh) print("worker-configuration.d.ts does not match wrangler.jsonc: run npm run types");
    }),
});
pipeLines(child.stdout, process.stdout, filter);
pipeLines(child.stderr, process.stderr, filter);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => {
  forgetDevServer(LOCAL_PORT, child);
  process.exit(code ?? 0);
});

try {
  // Only once the port answers with this run's id does the admin token go there.
  const { agent } = await waitUntilUp(LOCAL_URL, child);
  recordDevServer(LOCAL_PORT, child);
  const call = adminClient(LOCAL_URL, adminToken);
  const demo = expect(await call("GET", `/admin/accounts?email=${encodeURIComponent(DEMO.email)}`), [200], "looking for the demo account");
  if (demo.json.items.length === 0) await seedDemoData(call);
  console.log(`\nAgent: ${agent}\nReady: ${LOCAL_URL}/v1/plans  ·  API reference: ${LOCAL_URL}/v1/docs  ·  debugger: 127.0.0.1:${LOCAL_INSPECTOR_PORT}\n`);
} catch (error) {
  // wrangler says itself why it stopped; anything else is said here.
  if (child.exitCode === null) console.error(`Could not load the demo data: ${error.message}`);
}
