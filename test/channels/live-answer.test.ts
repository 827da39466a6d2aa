import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_KEEP_ALIVE_MS, liveEventStream, liveJsonAnswer } from "../../src/channels/live-answer";

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
