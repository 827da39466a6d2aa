import { exports } from "cloudflare:workers";
import { createParser } from "eventsource-parser";

export type StreamEvent = { id: number; type: string; data: any };

/** An event stream read as a client reads it: frames parsed as they arrive, comments counted. */
export type EventReader = {
  status: number;
  headers: Headers;
  events: StreamEvent[];
  comments: string[];
  retry: number | undefined;
  ended: () => boolean;
  /** The next event not yet returned by next(). */
  next(ms?: number): Promise<StreamEvent>;
  /** Waits until an event (received or to come) satisfies pred. */
  until(pred: (e: StreamEvent) => boolean, ms?: number): Promise<StreamEvent>;
  /** Waits until check() holds, looking again each time something (event, comment, end) arrives. */
  received(check: () => boolean, ms?: number): Promise<void>;
  /** Resolves once the server has ended the stream. */
  closed(ms?: number): Promise<void>;
  close(): Promise<void>;
  json?: any;
};

export async function openEvents(path: string, token: string | null, headers: Record<string, string> = {}): Promise<EventReader> {
  const h = new Headers({ accept: "text/event-stream", ...headers });
  if (token) h.set("authorization", `Bearer ${token}`);
  const response = await exports.default.fetch(new Request(`https://service.test${path}`, { headers: h }));
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  let retry: number | undefined;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const wait = (ms: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const base = { status: response.status, headers: response.headers, events, comments, ended: () => ended };
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const text = await response.text();
    const fail = async () => {
      throw new Error(`the stream was refused: ${response.status} ${text}`);
    };
    return { ...base, retry, json: text ? JSON.parse(text) : undefined, next: fail, until: fail, received: fail, closed: async () => {}, close: async () => {} };
  }
  const reader = response.body!.getReader();
  // Frames as a client reads them: events, the retry hint and comments, each waking whoever waits.
  const parser = createParser({
    onEvent: ({ id, event, data }) => {
      events.push({ id: Number(id), type: event ?? "message", data: JSON.parse(data) });
      wake();
    },
    onRetry: (ms) => {
      retry = ms;
      wake();
    },
    onComment: (comment) => {
      comments.push(comment.trim());
      wake();
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      // A dropped stream ends like a closed one; the test looks at what arrived.
    }
    ended = true;
    wake();
  })();
  let cursor = 0;
  return {
    ...base,
    get retry() {
      return retry;
    },
    async next(ms = 5_000) {
      while (cursor >= events.length) {
        if (ended) throw new Error("the stream ended");
        await wait(ms, "the next event");
      }
      return events[cursor++]!;
    },
    async until(pred, ms = 5_000) {
      for (let k = 0; ; ) {
        for (; k < events.length; k++) if (pred(events[k]!)) return events[k]!;
        if (ended) throw new Error("the stream ended before the event");
        await wait(ms, "an event");
      }
    },
    async received(check, ms = 5_000) {
      while (!check()) {
        if (ended) throw new Error("the stream ended first");
        await wait(ms, "something to arrive");
      }
    },
    async closed(ms = 5_000) {
      while (!ended) await wait(ms, "the stream to end");
    },
    async close() {
      await reader.cancel().catch(() => undefined);
    },
  };
}
