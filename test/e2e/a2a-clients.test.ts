// A2A clients nobody here wrote, in the versions their users have (test/e2e/a2a-clients, a workspace of its own, since
// the AI SDK provider wants ai 6 beside the service's ai 7), against a real wrangler dev: the card without A2A-Version
// as a v0.3 client reads it, a context the client made, and a streamed reply shown once by clients that append every chunk.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { world } from "../../client/test/world.ts";

const run = promisify(execFile);
const clients = join(import.meta.dirname, "a2a-clients");

async function runClient(script: string) {
  const worker = { base: inject("base"), adminToken: inject("adminToken") };
  const { token, projectId } = await world(worker);
  const env = { ...process.env, AGENT: `${worker.base}/a2a/projects/${projectId}/`, TOKEN: token };
  return (await run(process.execPath, [script], { cwd: clients, env })).stdout;
}

describe("A2A clients from npm", () => {
  it("@a2a-js/sdk 0.3.14 reads the card, sends in its own context, and shows a streamed reply once", async () => {
    const stdout = await runClient("sdk-0.3.mjs");
    expect(stdout).toContain("card: Project chat agent, protocol 0.3.0, JSONRPC at the agent's URL");
    expect(stdout).toContain("send: completed, context as sent");
    expect(stdout).toContain("stream: shown once, as the task has it");
    expect(stdout).toContain("same chat: true");
  }, 60_000);

  it("the AI SDK's provider (a2a-ai-provider with ai 6) generates and streams in its own context, the stream shown once", async () => {
    const stdout = await runClient("ai-sdk.mjs");
    expect(stdout).toMatch(/generateText: Done\. .*Hello from the AI SDK/);
    expect(stdout).toMatch(/streamText: shown once: Done\. .*Stream a reply in several pieces please/);
  }, 60_000);
});
