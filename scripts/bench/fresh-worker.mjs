// A Worker for a bench script: wrangler dev on fresh migrated state (tmpfs unless BENCH_STATE_DIR says otherwise), with vars.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev, stopWranglerDev } from "../lib.mjs";

/**
 * Starts it; `state` is the folder to remove afterwards. Without wrangler's local observability, as npm run bench.
 * Interrupted or timed out, the script takes the server with it, rather than leave it holding the port for the next run.
 */
export function startFreshWorker({ name, projectDir, port, vars }) {
  process.env.X_LOCAL_OBSERVABILITY = "false";
  const state = mkdtempSync(join(process.env.BENCH_STATE_DIR ?? "/dev/shm", `${name}-state-`));
  const migrated = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
    cwd: projectDir,
    stdio: "ignore",
    env: { ...process.env, CI: "true" },
  });
  if (migrated.status !== 0) throw new Error("migrations failed");
  const child = startWranglerDev({
    quiet: true,
    cwd: projectDir,
    logFile: join(tmpdir(), `bench-${name}-service.log`),
    port,
    inspectorPort: port + 1,
    extraArgs: ["--log-level", "warn", "--persist-to", state, ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`])],
  });
  for (const signal of ["SIGINT", "SIGTERM"])
    process.on(signal, () => {
      stopWranglerDev(child);
      process.exit(1);
    });
  return { child, state };
}
