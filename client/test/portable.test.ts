// The portable cases in Node, against the Worker, a server that never answers and a port where nothing listens.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
// @ts-expect-error: the project's scripts are JavaScript
import { freePort } from "../../scripts/lib.mjs";
import { cases, type Env } from "./portable.ts";

let requests = 0;
const hanging = createServer(() => {
  requests++;
});
let env: Env;

beforeAll(async () => {
  await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
  env = {
    base: inject("base"),
    adminToken: inject("adminToken"),
    hanging: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
    hangingRequests: async () => requests,
    refused: `http://127.0.0.1:${await freePort()}`,
  };
});

afterAll(async () => {
  hanging.closeAllConnections();
  await new Promise<void>((resolve) => hanging.close(() => resolve()));
});

describe("the client in Node", () => {
  for (const [name, run] of Object.entries(cases)) it(name, () => run(env));
});
