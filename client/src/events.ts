import { createParser } from "eventsource-parser";
import type { components } from "./generated/api.ts";
import { backoff, type CallOptions, Deadline, type Http, retryDelay, sleep } from "./http.ts";
import { ProblemError } from "./problem.ts";

type Schemas = components["schemas"];
type Data<T extends string, D> = { id: number; type: T; data: D };
type WireEvent = Schemas["ChatEvent"];
/** What each frame's `data` (JSON text) parses to: the component its contentSchema names; an event the document adds fails to compile here until named. */
type EventData = {
  snapshot: Schemas["ChatSnapshot"];
  chat: Schemas["Chat"];
  "queue.entry": Schemas["QueueEntry"];
  "queue.removed": Schemas["QueueRemoved"];
  message: Schemas["Message"];
  "message.delta": Schemas["MessageDelta"];
  question: Schemas["Question"];
};
/** One event of a chat's stream, typed by its name: the document's ChatEvent frames (generated), parsed, its id a number. */
export type ChatEvent = { [T in WireEvent["event"]]: Data<T, EventData[T]> }[WireEvent["event"]];

/** One Server-Sent Events frame: an event's fields (its data lines joined), or a comment (a keep-alive). */
type Frame = { id?: string; event?: string; data?: string; comment?: string };

/** Server-Sent Events frames from a byte stream, parsed as EventSource does (eventsource-parser), comments included. */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame> {
  const frames: Frame[] = [];
  const parser = createParser({ onEvent: ({ id, event, data }) => frames.push({ id, event, data }), onComment: (comment) => frames.push({ comment: comment.trim() }) });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (frames.length > 0) yield frames.shift()!;
    }
  } finally {
    reader.releaseLock();
  }
}

export type FollowOptions = CallOptions & {
  /** Resume after this event id (as Chat-Event-Id or an earlier follow gave); without it the stream starts with a snapshot. */
  after?: number;
};

/**
 * A chat's events, each once and in id order, for as long as the caller iterates: after a dropped or
 * ended stream it reconnects with Last-Event-ID (with backoff, honouring Retry-After up to a minute),
 * so the events go on without a gap; a resume point the server no longer keeps yields a fresh
 * `snapshot`. Keep-alives are swallowed. The timeout bounds opening each stream and any silence in an
 * open one (the server sends a keep-alive at least every 15 s): a stream that keeps it waiting longer
 * is dropped and opened again, like one that failed. It ends when the signal aborts; a refusal that
 * retrying cannot change (401, 403, 404) throws ProblemError.
 */
export async function* followChat(http: Http, path: string, options: FollowOptions = {}): AsyncGenerator<ChatEvent> {
  const { signal } = options;
  const timeout = http.timeoutOf(options);
  let last = options.after;
  let failures = 0;
  while (!signal?.aborted) {
    let wait = backoff(0);
    const connection = new Deadline(timeout, signal);
    try {
      const response = await http.fetch(http.url(path, { after: last }), {
        headers: http.headers({ accept: "text/event-stream", ...(last !== undefined ? { "last-event-id": String(last) } : {}) }),
        signal: connection.signal,
      });
      if (response.ok) {
        failures = 0;
        connection.restart();
        for await (const frame of sseFrames(response.body!)) {
          connection.restart();
          if (frame.id === undefined || !frame.event || frame.data === undefined) continue;
          const id = Number(frame.id);
          if (last !== undefined && id <= last) continue;
          last = id;
          // The caller's time with an event is not the server's silence.
          connection.pause();
          yield { id, type: frame.event, data: JSON.parse(frame.data) } as ChatEvent;
          connection.restart();
        }
        // The server ended the stream (it does every few minutes): go on from the last id.
      } else {
        const problem = await ProblemError.from(response);
        if (problem.status !== 429 && problem.status < 500) throw problem;
        wait = retryDelay(problem, failures++);
      }
    } catch (error) {
      if (error instanceof ProblemError) throw error;
      // Not reached, timed out or dropped: go on from the last id, backing off while it keeps failing.
      if (signal?.aborted) return;
      wait = backoff(failures++);
    } finally {
      connection.close();
    }
    await sleep(wait, signal).catch(() => undefined);
  }
}
