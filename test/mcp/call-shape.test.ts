import { describe, expect, it } from "vitest";
import { callShape } from "../../src/mcp/live-answer";

describe("which calls wait", () => {
  const call = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
    jsonrpc: "2.0" as const,
    id: 1,
    method: "tools/call",
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });
  it("tells a waiting call, and one that also asked for progress, from the others", () => {
    expect(callShape(call("send_message", { waitSeconds: 5 }))).toEqual({ wait: true, progress: false });
    expect(callShape(call("send_message", { waitSeconds: 5 }, { progressToken: 1 }))).toEqual({ wait: true, progress: true });
    expect(callShape(call("answer_question", { waitSeconds: 5 }, { progressToken: 1 }))).toEqual({ wait: true, progress: true });
    expect(callShape(call("send_message", { waitSeconds: 0 }, { progressToken: 1 }))).toEqual({ wait: false, progress: false });
    expect(callShape(call("get_chat", { waitSeconds: 5 }, { progressToken: 1 }))).toEqual({ wait: false, progress: false });
    expect(callShape({ jsonrpc: "2.0", method: "notifications/initialized" })).toEqual({ wait: false, progress: false });
  });
});
