import { sseComment } from "./event-log";

/** Who a stream was opened for, so the chat object can keep checking that it may stay open. */
export type StreamGrant = { gateName: string; leaseId: string; accountId: string; projectId: string };

export type ListenerTiming = { maxAgeMs: number; stallMs: number };
// Streams opened together should not all end, and reconnect, in the same second.
export const MAX_AGE_JITTER_MS = 30_000;
/** Where a stream pulls its frames from: the chat's event log, encoded. */
export type FrameSource = { framesAfter(cursor: number, maxBytes: number): { frames: Uint8Array[]; last: number; lost?: true } };

// What one pull hands the runtime at most (a single larger event still goes whole).
export const LISTENER_PULL_BYTES = 64 * 1024;
// Small events ready together (a reply's part and the chat's preview) go as one write of this much at most; larger ones go as they are, shared.
export const JOINED_WRITE_MAX_BYTES = 4 * 1024;
const KEEP_ALIVE = sseComment("keep-alive");
const RECONNECT = sseComment("this stream has ended; reconnect with Last-Event-ID to continue");

/**
 * One open event stream. It pulls: only when the runtime asks for more does it read the log after
 * its cursor and hand over the encoded frames, the same arrays every listener gets, at most about
 * 64 KB a time. So replay and live delivery are one path, and a slow reader holds a cursor, not a copy.
 * Its opening frames (the snapshot, up to a full queue's megabyte) go the same way: views of the one
 * encoding, handed over a pull at a time, so a reader that never reads holds no copy of them either.
 */
class Listener {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private wakeUp: (() => void) | undefined;
  // The runtime asked for more and is waiting for it.
  private asked = false;
  // Since when something (an event, or a keep-alive that is due) has waited for the runtime to take it.
  private waitingSince: number | undefined;
  private readonly jitterMs = Math.random() * MAX_AGE_JITTER_MS;
  // Opening frames and frames told to this stream alone, not yet handed over (a frame may be handed over in parts).
  private pending: Uint8Array[];
  ended = false;
  readonly stream: ReadableStream<Uint8Array>;

  constructor(
    private readonly source: FrameSource,
    private cursor: number,
    readonly grant: StreamGrant,
    readonly openedAt: number,
    first: Uint8Array[],
    private readonly onEnd: (listener: Listener) => void,
  ) {
    this.pending = [...first];
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.pull(),
        cancel: () => this.finish(),
      },
      // Nothing is queued ahead of what the runtime asks for: pull runs only when it wants more.
      { highWaterMark: 0 },
    );
  }

  /** The runtime wants more: hands it what the log has after the cursor, or waits for it. */
  private async pull(): Promise<void> {
    this.asked = true;
    // It took everything it was given: a slow reader that keeps taking is not stalled.
    this.waitingSince = undefined;
    if (this.pending.length) return this.handPending();
    while (!this.ended) {
      const { frames, last, lost } = this.source.framesAfter(this.cursor, LISTENER_PULL_BYTES);
      // So far behind that the log dropped what comes next: it resumes from its last id, with a snapshot.
      if (lost) return this.end();
      if (frames.length) {
        this.cursor = last;
        this.asked = false;
        for (const chunk of joinSmall(frames)) this.controller.enqueue(chunk);
        return;
      }
      await new Promise<void>((resolve) => (this.wakeUp = resolve));
    }
  }

  /** Up to one pull's worth of what waits for this stream alone; a larger frame goes in parts (SSE is a byte stream). */
  private handPending(): void {
    this.asked = false;
    let room = LISTENER_PULL_BYTES;
    const out: Uint8Array[] = [];
    while (room > 0 && this.pending.length) {
      const frame = this.pending[0]!;
      if (frame.byteLength <= room) {
        out.push(this.pending.shift()!);
        room -= frame.byteLength;
      } else {
        out.push(frame.subarray(0, room));
        this.pending[0] = frame.subarray(room);
        room = 0;
      }
    }
    for (const chunk of joinSmall(out)) this.controller.enqueue(chunk);
  }

  wake(): void {
    const resolve = this.wakeUp;
    this.wakeUp = undefined;
    resolve?.();
  }

  /** Keep-alive, age and stall checks; returns false once the listener has ended. */
  pulse(now: number, timing: ListenerTiming): boolean {
    if (this.ended) return false;
    if (now - this.openedAt >= timing.maxAgeMs + this.jitterMs) {
      this.end();
      return false;
    }
    // Taking: the runtime waits for more and holds nothing of ours unread. Otherwise what is due waits for it,
    // a keep-alive at least; after stallMs of that the reader is slow or gone, and it resumes from its last id.
    const taking = this.asked && (this.controller.desiredSize ?? 0) >= 0;
    if (!taking) {
      this.waitingSince ??= now;
      if (now - this.waitingSince < timing.stallMs) return true;
      this.end(false);
      return false;
    }
    this.waitingSince = undefined;
    this.tell(KEEP_ALIVE);
    return !this.ended;
  }

  /** A frame for this stream alone, after what it was handed so far (a comment: it is no event of the log). */
  tell(frame: Uint8Array): void {
    if (this.ended) return;
    // Behind the opening frames still waiting, never inside one of them.
    if (this.pending.length) {
      this.pending.push(frame);
      return;
    }
    try {
      this.controller.enqueue(frame);
    } catch {
      // The stream broke without telling us (its reader is gone).
      this.finish();
    }
  }

  /** Ends the stream cleanly after what is queued (with a reconnect hint, if it may still be read): the client resumes with Last-Event-ID. */
  end(hint = true): void {
    if (this.ended) return;
    try {
      // With the hint the client reads on to it, so what it was due comes first; without it (a reader gone) nothing more.
      if (hint) for (const frame of [...this.pending, RECONNECT]) this.controller.enqueue(frame);
      this.pending = [];
      this.controller.close();
    } catch {
      // Already closed, or cancelled by the reader.
    }
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.wake();
    this.onEnd(this);
  }
}

/** Frames ready together, as few writes: runs of small ones joined (each write has a cost of its own), larger ones as they are. */
export function joinSmall(frames: Uint8Array[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let run: Uint8Array[] = [];
  let runBytes = 0;
  const flush = () => {
    if (run.length === 1) chunks.push(run[0]!);
    else if (run.length > 1) {
      const joined = new Uint8Array(runBytes);
      let at = 0;
      for (const frame of run) {
        joined.set(frame, at);
        at += frame.byteLength;
      }
      chunks.push(joined);
    }
    run = [];
    runBytes = 0;
  };
  for (const frame of frames) {
    if (runBytes + frame.byteLength > JOINED_WRITE_MAX_BYTES) flush();
    run.push(frame);
    runBytes += frame.byteLength;
  }
  flush();
  return chunks;
}

/** The live streams of one chat object. */
export class Listeners {
  private readonly open = new Set<Listener>();

  constructor(
    private readonly source: FrameSource,
    private readonly onEnd: (grant: StreamGrant) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  grants(): StreamGrant[] {
    return [...this.open].map((l) => l.grant);
  }

  /** A stream that first sends `first` (retry hint, snapshot), then every event after `cursor`. */
  add(cursor: number, first: Uint8Array[], grant: StreamGrant, now: number): ReadableStream<Uint8Array> {
    const listener = new Listener(this.source, cursor, grant, now, first, (l) => {
      this.open.delete(l);
      this.onEnd(l.grant);
    });
    this.open.add(listener);
    return listener.stream;
  }

  /** New events are in the log: every waiting listener reads them. */
  wake(): void {
    for (const listener of this.open) listener.wake();
  }

  pulse(now: number, timing: ListenerTiming): void {
    for (const listener of [...this.open]) listener.pulse(now, timing);
  }

  /** A frame for the streams of one credential only (its TokenGate's name). */
  tell(gateName: string, frame: Uint8Array): void {
    for (const listener of this.open) if (listener.grant.gateName === gateName) listener.tell(frame);
  }

  /** Ends the streams whose grant no longer holds (token revoked or expired, access lost, the client gone). */
  endWhere(revoked: (grant: StreamGrant) => boolean): void {
    for (const listener of [...this.open]) if (revoked(listener.grant)) listener.end();
  }
}
