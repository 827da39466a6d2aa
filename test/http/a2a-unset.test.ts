import { describe, expect, it } from "vitest";
import { call, world } from "../helpers";

describe("A2A without PUBLIC_URL", () => {
  it("answers 404 on every /a2a path, whatever the method: no card, no agent", async () => {
    const w = await world();
    const base = `/a2a/projects/${w.projectId}`;
    for (const [method, path] of [
      ["GET", `${base}/.well-known/agent-card.json`],
      ["POST", base],
      ["GET", base],
      ["DELETE", `${base}/`],
    ] as const) {
      const r = await call(method, path, { token: w.token, ...(method === "POST" ? { body: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } } } : {}) });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
  });
});
