// npm run dev on a port that another server holds: it says so and stops, and hands that server nothing.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, waitUntilUp } from "../lib.mjs";
import { startStandIn } from "./stand-in";

const run = promisify(execFile);
const npmRunDev = (env: Record<string, string>) =>
  run("npm", ["run", "dev"], { env: { ...process.env, ...env }, timeout: 60_000 }).then(
    (done) => ({ code: 0, output: done.stdout + done.stderr }),
    (failed) => ({ code: failed.code as number, output: `${failed.stdout}${failed.stderr}` }),
  );

let standIn: Awaited<ReturnType<typeof startStandIn>> | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

describe("npm run dev on a port it does not own", () => {
  it("says in one line that the port is in use and exits 1, without Ready and without sending the stand-in anything", async () => {
    standIn = await startStandIn();
    const { code, output } = await npmRunDev({ DEV_PORT: String(standIn.port) });
    expect(code).toBe(1);
    expect(output).not.toMatch(/Ready/);
    const said = output.split("\n").filter((line) => line.trim() && !line.startsWith(">"));
    expect(said).toEqual([
      `Port ${standIn.port} is already in use: stop what listens there, or start on other ports with DEV_PORT=${standIn.port + 2} npm run dev (its debugger then on ${standIn.port + 3}), or DEV_INSPECTOR_PORT for the debugger alone.`,
    ]);
    expect(standIn.requests.filter((r) => r.authorization)).toEqual([]);
    expect(standIn.requests).toEqual([]);
  });

  it("refuses the same way when its debugger port (the one after DEV_PORT, or DEV_INSPECTOR_PORT) is taken", async () => {
    const port = await freePort();
    standIn = await startStandIn(port + 1);
    const next = await npmRunDev({ DEV_PORT: String(port) });
    expect(next.code).toBe(1);
    expect(next.output).not.toMatch(/Ready/);
    expect(next.output).toContain(`Port ${port + 1} (wrangler's debugger port for ${port}) is already in use`);
    const chosen = await npmRunDev({ DEV_PORT: String(await freePort()), DEV_INSPECTOR_PORT: String(port + 1) });
    expect(chosen.code).toBe(1);
    expect(chosen.output).toContain(`Port ${port + 1} (wrangler's debugger port for`);
    expect(standIn.requests).toEqual([]);
  });

  it("waits for its own Worker's id and never takes another server's answer for it (a port taken after the check)", async () => {
    standIn = await startStandIn();
    const ownWorker = { exitCode: null, serverId: "this-run" };
    await expect(waitUntilUp(`http://127.0.0.1:${standIn.port}`, ownWorker, { seconds: 1 })).rejects.toThrow("did not come up within 1 s");
    expect(standIn.requests.length).toBeGreaterThan(0);
    expect(new Set(standIn.requests.map((r) => `${r.method} ${r.url}`))).toEqual(new Set(["GET /dev/server"]));
    expect(standIn.requests.filter((r) => r.authorization)).toEqual([]);
  });
});
