// npm run token against a real wrangler dev (the client project's, on fresh local state, seeded here like npm run dev does).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { adminClient } from "../lib.mjs";
import { DEMO, seedDemoData } from "../seed-data.mjs";

const run = promisify(execFile);
const portOf = (url: string) => new URL(url).port;
const token = (devPort: string, ...args: string[]) => run(process.execPath, ["scripts/token.mjs", ...args], { env: { ...process.env, DEV_PORT: devPort } }).catch((error) => error);

describe("npm run token", () => {
  beforeAll(async () => {
    await seedDemoData(adminClient(inject("base"), inject("adminToken")));
  });

  it("prints a token for the demo project, once, with a curl line that works as printed", async () => {
    const { stdout } = await token(portOf(inject("base")));
    const printed = [...stdout.matchAll(/pct_[A-Za-z0-9_-]+/g)].map((m) => m[0]);
    expect(new Set(printed).size).toBe(1);
    expect(stdout).toContain(`Demo project: ${DEMO.projectId}`);
    const chats = await fetch(`${inject("base")}/v1/projects/${DEMO.projectId}/chats`, { headers: { authorization: `Bearer ${printed[0]}` } });
    expect(chats.status).toBe(200);
    expect(await chats.json()).toEqual({ items: expect.any(Array) });

    const curl = stdout.split("\n").find((line) => line.trim().startsWith("curl "))!;
    const { stdout: listed } = await run("sh", ["-c", curl]);
    expect(JSON.parse(listed)).toEqual({ items: expect.any(Array) });
  });

  it("gives each run its own token, and --shell prints the variables the README's examples use", async () => {
    const { stdout } = await token(portOf(inject("base")), "--shell");
    const vars = Object.fromEntries(
      stdout
        .trim()
        .split("\n")
        .map((line: string) => line.split(/=(.*)/).slice(0, 2)),
    );
    expect(vars).toEqual({ BASE: inject("base"), PROJECT: DEMO.projectId, TOKEN: expect.stringMatching(/^pct_/) });
    const other = (await token(portOf(inject("base")))).stdout;
    expect(other).not.toContain(vars.TOKEN);
    const r = await fetch(`${vars.BASE}/v1/projects/${vars.PROJECT}/chats`, { headers: { authorization: `Bearer ${vars.TOKEN}` } });
    expect(r.status).toBe(200);
  });

  it("uses the demo data that the reference's try-it examples name", async () => {
    const doc = await (await fetch(`${inject("base")}/v1/openapi.json`)).json();
    const listChats = doc.paths["/v1/projects/{projectId}/chats"].get;
    expect(listChats.parameters.find((p: { name: string }) => p.name === "projectId").schema.example).toBe(DEMO.projectId);
    expect(doc.components.schemas.SignInRequest.example).toEqual({ email: DEMO.email, password: DEMO.password });
  });

  it("says how to start the server when nothing answers on DEV_PORT, and exits 1", async () => {
    const failed = await token("9");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("npm run dev");
    expect(failed.stdout).toBe("");
  });
});
