import { describe, expect, it } from "vitest";
import { JsonAnswer } from "../../src/mcp/json-answer";

describe("a call answered with one JSON body", () => {
  it("answers with the call's response and nothing the server sent before it", async () => {
    const transport = new JsonAnswer();
    transport.onmessage = () => {
      // The server's progress notification has no stream here; only the response answers.
      void transport.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } });
      void transport.send({ jsonrpc: "2.0", id: 7, result: { ok: true } });
    };
    const answer = await transport.answer({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: 7, result: { ok: true } });
  });

  it("answers an error response as the body too", async () => {
    const transport = new JsonAnswer();
    transport.onmessage = () => void transport.send({ jsonrpc: "2.0", id: "a", error: { code: -32601, message: "Method not found" } });
    expect(await (await transport.answer({ jsonrpc: "2.0", id: "a", method: "nope" })).json()).toEqual({
      jsonrpc: "2.0",
      id: "a",
      error: { code: -32601, message: "Method not found" },
    });
  });

  it("accepts a notification with 202 and no body", async () => {
    const transport = new JsonAnswer();
    const seen: unknown[] = [];
    transport.onmessage = (message) => seen.push(message);
    const answer = await transport.answer({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(answer.status).toBe(202);
    expect(await answer.text()).toBe("");
    expect(seen).toEqual([{ jsonrpc: "2.0", method: "notifications/initialized" }]);
  });
});
