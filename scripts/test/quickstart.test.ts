// One quickstart: the README's first block and the front door's (src/docs/quickstart.ts) are the same commands.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FOLLOW, LOCAL_TOKEN, SEND } from "../../src/docs/quickstart.ts";
import { projectDir } from "../lib.mjs";
import { shellBlocks, withStatedOutputs } from "../readme-check.mjs";

/** A block's commands: its lines without the comment lines that show what they print. */
const commands = (code: string) =>
  code
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n");

describe("the quickstart", () => {
  it("is the same commands in the README's first block as on the front door under npm run dev", () => {
    const [quickstart] = shellBlocks(readFileSync(`${projectDir}/README.md`, "utf8")).filter((block: { skip?: string }) => !block.skip);
    expect(commands(quickstart.code)).toBe([LOCAL_TOKEN, SEND, FOLLOW].join("\n"));
  });

  it("lets readme-check compare a stated line of JSON, and leaves one with an ellipsis alone", () => {
    expect(withStatedOutputs(`curl -s $BASE/x | jq -c .   # {"balance":995,"canRun":true}`)).toBe(`curl -s $BASE/x | jq -c . | stated_output '{"balance":995,"canRun":true}'`);
    const elided = `curl -s $BASE/x | jq -c .   # {"id":"…"}`;
    expect(withStatedOutputs(elided)).toBe(elided);
  });
});
