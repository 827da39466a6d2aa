import { ANSWER_REFUSED } from "../chats/room-calls";
import type { OpenV1Stream, V1Answer } from "./v1-call";
import { v1Path } from "./v1-call";

/** One event of a chat's stream: its id, type and the JSON text of its data (parsed only by whoever needs it). */
export type FollowedEvent = { id: number; type: string; data: string };

const FRAME_END = "\n\n";
const REFUSED_COMMENT = `: ${ANSWER_REFUSED} `;

/**
 * A chat's event stream (GET …/events) followed in-process by a waiting tool call. Opening it takes
 * one of the token's stream places, as any stream does; the chat object then tells the wait of every
 * change, keeps the place leased and ends the stream when the token or the project access goes.
 * Closing it gives the place back.
 */
export class ChatFollower {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private readonly ready: FollowedEvent[] = [];
  private ended = false;
  // A read the runtime has not answered yet: a wait cut short by its signal picks it up next time, so no chunk is lost.
  private reading: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;

  private constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /**
   * The stream of a chat the caller may read, or the problem /v1 answered (429 too_many_streams with no place free);
   * `after`: resumes after that event id (a snapshot first when it is no longer kept).
   */
  static async open(open: OpenV1Stream, projectId: string, chatId: string, after?: number): Promise<V1Answer<ChatFollower>> {
    const opened = await open(v1Path(projectId, "chats", chatId, "events"), after === undefined ? undefined : { after: String(after) });
    return opened.ok ? { ...opened, body: new ChatFollower(opened.body) } : opened;
  }

  /** The next event; null once the server ended the stream, or when `stop` fires first. */
  async next(stop: AbortSignal): Promise<FollowedEvent | null> {
    while (this.ready.length === 0) {
      if (this.ended || stop.aborted) return null;
      this.reading ??= this.reader.read();
      // A stream that breaks (its object restarted) has ended like one the server closed.
      const chunk = await untilAborted(this.reading, stop).catch(() => ({ done: true as const, value: undefined }));
      if (chunk === null) return null;
      this.reading = undefined;
      if (chunk.done) this.ended = true;
      else this.take(this.decoder.decode(chunk.value, { stream: true }));
    }
    return this.ready.shift()!;
  }

  /** Ends the stream from this side: the chat object drops its listener and the stream place is freed. */
  close(): void {
    this.ended = true;
    this.reader.cancel().catch(() => undefined);
  }

  /** Frames as the chat object writes them: `id`, `event` and one `data` line; comments and the retry hint carry no event. */
  private take(text: string): void {
    this.buffer += text;
    for (let end = this.buffer.indexOf(FRAME_END); end >= 0; end = this.buffer.indexOf(FRAME_END)) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + FRAME_END.length);
      // The one comment a wait reads: an answer its credential sent from a form was refused.
      if (frame.startsWith(REFUSED_COMMENT)) {
        this.ready.push({ id: 0, type: ANSWER_REFUSED, data: frame.slice(REFUSED_COMMENT.length) });
        continue;
      }
      const fields = new Map<string, string>();
      for (const line of frame.split("\n")) {
        const colon = line.indexOf(": ");
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
      }
      const [id, type, data] = [fields.get("id"), fields.get("event"), fields.get("data")];
      if (id !== undefined && type !== undefined && data !== undefined) this.ready.push({ id: Number(id), type, data });
    }
  }
}

/** The promise's value, or null as soon as the signal fires (the promise itself is left to settle). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  return new Promise<T | null>((resolve, reject) => {
    const abort = () => resolve(null);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}
