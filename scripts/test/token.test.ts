// npm run token against a real wrangler dev (the client project's, on fresh local state, seeded here like npm run dev does).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { adminClient } from "../lib.mjs";
import { startStandIn } from "./stand-in";
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

  it("--help prints its usage; an unknown option is one line and the usage, exit 2, never a stack", async () => {
    const help = await token(portOf(inject("base")), "--help");
    expect(help.stdout).toMatch(/^Usage: npm run token \[-- --shell\]/);
    const wrong = await token(portOf(inject("base")), "--bogus");
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe("");
    expect(wrong.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^npm run token: Unknown option '--bogus'/), expect.stringMatching(/^Usage: npm run token/)]);
  });

  it("--shell exports the variables the README's examples and mcp.json use", async () => {
    const { stdout } = await token(portOf(inject("base")), "--shell");
    const vars = Object.fromEntries([...stdout.matchAll(/(?:^export |\s)([A-Z_]+)=(\S+)/gm)].map((m) => [m[1], m[2]]));
    expect(vars).toEqual({
      BASE: inject("base"),
      PROJECT: DEMO.projectId,
      TOKEN: expect.stringMatching(/^pct_/),
      PROJECT_CHAT_URL: inject("base"),
      PROJECT_CHAT_TOKEN: vars.TOKEN,
    });
    const { stdout: echoed } = await run("bash", ["-c", `eval "$1"; bash -c 'echo "$BASE $PROJECT $TOKEN $PROJECT_CHAT_TOKEN"'`, "-", stdout]);
    expect(echoed.trim(), "exported, so child processes (npm run client:example, an MCP client) see them").toBe(`${vars.BASE} ${vars.PROJECT} ${vars.TOKEN} ${vars.TOKEN}`);
    const r = await fetch(`${vars.BASE}/v1/projects/${vars.PROJECT}/chats`, { headers: { authorization: `Bearer ${vars.TOKEN}` } });
    expect(r.status).toBe(200);
  });

  it("leaves one live token however often it runs: each run revokes the one the run before made", async () => {
    const liveTokens = async () => {
      const session = (await adminClient(inject("base"), "")("POST", "/auth/token", { email: DEMO.email, password: DEMO.password })).json.token;
      const { items } = (await adminClient(inject("base"), session)("GET", "/auth/api-tokens")).json;
      return items.length as number;
    };
    const before = await liveTokens();
    const printed: string[] = [];
    for (let run = 0; run < 3; run++) printed.push((await token(portOf(inject("base")), "--shell")).stdout.match(/TOKEN=(pct_\S+)/)![1]);
    expect(new Set(printed).size).toBe(3);
    expect(await liveTokens()).toBeLessThanOrEqual(before + 1);
    const statuses = await Promise.all(printed.map(async (t) => (await fetch(`${inject("base")}/v1/projects`, { headers: { authorization: `Bearer ${t}` } })).status));
    expect(statuses).toEqual([401, 401, 200]);
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
    expect(failed.stderr.trim()).toBe("Nothing answers at http://127.0.0.1:9: start it with npm run dev (set DEV_PORT here too if it runs on another port).");
    expect(failed.stdout).toBe("");
  });

  it("sends no password to a server on DEV_PORT that is not the npm run dev it knows", async () => {
    const standIn = await startStandIn();
    try {
      const failed = await token(String(standIn.port));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`Something else answers at http://127.0.0.1:${standIn.port}, not this project's npm run dev`);
      expect(standIn.requests.map((r) => `${r.method} ${r.url}`)).not.toContain("POST /auth/token");
      expect(standIn.requests.filter((r) => r.authorization)).toEqual([]);
    } finally {
      await standIn.close();
    }
  });
});
