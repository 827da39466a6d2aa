import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_KEEP_ALIVE_MS, liveEventStream, liveJsonAnswer } from "../../src/channels/live-answer";
import { callShape } from "../../src/mcp/live-answer";

const text = new TextDecoder();
const read = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
  const { value, done } = await reader.read();
  return done ? null : text.decode(value);
};

/** A stream the test writes into by hand, standing for the transport's event stream. */
function handFed() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const cancelled = vi.fn();
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c), cancel: cancelled });
  return { stream, cancelled, send: (s: string) => controller.enqueue(new TextEncoder().encode(s)), end: () => controller.close() };
}

describe("keeping a waiting call's answer alive", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("sends white space while a JSON answer is not known, then the answer: the body is still that JSON", async () => {
    const hangUp = new AbortController();
    let answer!: (r: Response) => void;
    const response = liveJsonAnswer(new Promise((resolve) => (answer = resolve)), hangUp);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const reader = response.body!.getReader();
    const first = read(reader);
    await vi.advanceTimersByTimeAsync(ANSWER_KEEP_ALIVE_MS);
    expect(await first).toBe(" ");
    answer(Response.json({ jsonrpc: "2.0", id: 1, result: {} }));
    let body = " ";
    for (let chunk = await read(reader); chunk !== null; chunk = await read(reader)) body += chunk;
    expect(JSON.parse(body)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(hangUp.signal.aborted).toBe(false);
  });

  it("takes a cancelled JSON answer for a hang-up", async () => {
    const hangUp = new AbortController();
    const response = liveJsonAnswer(new Promise(() => {}), hangUp);
    await response.body!.cancel();
    await vi.advanceTimersByTimeAsync(0);
    expect(hangUp.signal.aborted).toBe(true);
  });

  it("passes an event stream through with a comment whenever it was quiet, and takes its cancel for a hang-up", async () => {
    const hangUp = new AbortController();
    const source = handFed();
    const reader = liveEventStream(new Response(source.stream, { headers: { "content-type": "text/event-stream" } }), hangUp).body!.getReader();
    source.send("event: message\ndata: {}\n\n");
    expect(await read(reader)).toBe("event: message\ndata: {}\n\n");
    const quiet = read(reader);
    await vi.advanceTimersByTimeAsync(ANSWER_KEEP_ALIVE_MS);
    expect(await quiet).toBe(": keep-alive\n\n");
    await reader.cancel();
    await vi.advanceTimersByTimeAsync(0);
    expect(hangUp.signal.aborted).toBe(true);
    expect(source.cancelled).toHaveBeenCalled();
  });

  it("ends an event stream when its source ends, without a hang-up", async () => {
    const hangUp = new AbortController();
    const source = handFed();
    const reader = liveEventStream(new Response(source.stream), hangUp).body!.getReader();
    source.send("data: last\n\n");
    source.end();
    expect(await read(reader)).toBe("data: last\n\n");
    expect(await read(reader)).toBeNull();
    expect(hangUp.signal.aborted).toBe(false);
  });
});

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
