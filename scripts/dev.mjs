#!/usr/bin/env node
// npm run dev: migrate local D1, start wrangler dev on 127.0.0.1:8787 (or DEV_PORT; PUBLIC_URL defaults to that address), and seed the demo data when the database is empty.
import { devOutputFilter, pipeLines, typesUpToDate } from "./dev-output.mjs";
import { LOCAL_INSPECTOR_PORT, LOCAL_PORT, LOCAL_URL, adminClient, applyLocalMigrations, devVarArgs, localAdminToken, projectDir, startWranglerDev, waitUntilUp } from "./lib.mjs";
import { seedDemoData } from "./seed-data.mjs";

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
child.on("exit", (code) => process.exit(code ?? 0));

try {
  await waitUntilUp(LOCAL_URL, child);
  const call = adminClient(LOCAL_URL, adminToken);
  if ((await call("GET", "/admin/catalog")).status === 404) await seedDemoData(call);
  console.log(`\nReady: ${LOCAL_URL}/v1/plans  ·  API reference: ${LOCAL_URL}/v1/docs\n`);
} catch (error) {
  console.error(`Could not seed the demo data: ${error.message}`);
}
