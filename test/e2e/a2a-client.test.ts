// The outside check of A2A: @a2a-js/sdk's own client (ClientFactory), not the service's code, against a real wrangler dev,
// through scripts/examples/a2a.ts (the README's example): discovery, a blocking send answered through a question with
// the same taskId, a stream and its resume, a cancel, a push to a receiver of its own and a v0.3 client.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { world } from "../../client/test/world.ts";

const run = promisify(execFile);

describe("A2A with @a2a-js/sdk's client", () => {
  it("discovers the agent, answers its question with the same taskId, resumes a stream, cancels, is pushed to, and speaks v0.3", async () => {
    const worker = { base: inject("base"), adminToken: inject("adminToken") };
    const { token, projectId } = await world(worker);
    const { stdout } = await run(process.execPath, ["scripts/examples/a2a.ts", "/choose Which theme? | Light | Dark"], {
      env: { ...process.env, BASE: worker.base, TOKEN: token, PROJECT: projectId },
    });
    expect(stdout).toContain("discovered: client tests, A2A 1.0");
    expect(stdout).toContain("asked (INPUT_REQUIRED): Which theme?");
    expect(stdout).toMatch(/task COMPLETED, 1 question answered, reply: .*Light/);
    expect(stdout).toMatch(/resumed after event \d+: \d+ events, the same as the stream's rest/);
    expect(stdout).toContain("cancel: SUBMITTED -> CANCELED");
    // Queued behind the first, then working, then ended: each state pushed once, each signed with the config's token.
    expect(stdout).toContain("push: WORKING -> COMPLETED; listed 1 config, its token not shown");
    expect(stdout).toContain("v0.3 client: A2A 0.3, task COMPLETED");
  }, 120_000);
});
