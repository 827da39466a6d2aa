// client/examples/follow.ts (npm run client:example) run as a reader of the README runs it: told where by BASE alone.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { base, world } from "./helpers.ts";

const run = promisify(execFile);

/** The example in a process of its own, with only the given variables of the README's (no DEV_PORT, no TOKEN unless given). */
function example(vars: Record<string, string>) {
  const env = { ...process.env, ...vars };
  for (const name of ["DEV_PORT", "TOKEN", "PROJECT", "EMAIL", "PASSWORD"]) if (!(name in vars)) delete env[name];
  return run(process.execPath, ["client/examples/follow.ts"], { env, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (failed) => ({ code: failed.code as number, stdout: failed.stdout as string, stderr: failed.stderr as string }),
  );
}

describe("npm run client:example", () => {
  it("follows a reply at BASE without DEV_PORT, signing in for a token of its own that it revokes", async () => {
    const { email, password, projectId, session } = await world();
    const ids = async () => (await session.tokens.list()).map((t) => t.id);
    const before = await ids();
    const { code, stdout, stderr } = await example({ BASE: base(), EMAIL: email, PASSWORD: password, PROJECT: projectId });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("“Build me a landing page”");
    expect(stdout.trim().endsWith("[success]")).toBe(true);
    expect(await ids(), "its own token is revoked again").toEqual(before);
  });

  it("uses TOKEN when the shell has one, and makes no token then", async () => {
    const { token, projectId, session } = await world();
    const ids = async () => (await session.tokens.list()).map((t) => t.id);
    const before = await ids();
    const { code, stdout } = await example({ BASE: base(), TOKEN: token, PROJECT: projectId });
    expect(code).toBe(0);
    expect(stdout.trim().endsWith("[success]")).toBe(true);
    expect(await ids()).toEqual(before);
  });

  it("says in one line that nothing answers at BASE and how to start the server, without a stack", async () => {
    const { code, stdout, stderr } = await example({ BASE: "http://127.0.0.1:9" });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe("Nothing answers at http://127.0.0.1:9: start the server with npm run dev, or set BASE to where it runs.\n");
  });
});
