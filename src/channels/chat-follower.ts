import { createParser } from "eventsource-parser";
import type { Scope } from "../auth/scopes";
import { ANSWER_REFUSED } from "../chats/room-calls";
import type { ChatRef, ChatService, Served } from "../chats/service/chat-service";

/** One event of a chat's stream: its id, type and the JSON text of its data (parsed only by whoever needs it). */
export type FollowedEvent = { id: number; type: string; data: string };

const REFUSED_COMMENT = `${ANSWER_REFUSED} `;

/**
 * A chat's event stream followed in-process by a waiting call (an MCP wait, an A2A task). Opening it takes
 * one of the token's stream places, as any stream does; the chat object then tells the wait of every
 * change, keeps the place leased and ends the stream when the token or the project access goes.
 * Closing it gives the place back.
 */
export class ChatFollower {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private readonly ready: FollowedEvent[] = [];
  // Frames as the chat object writes them: `id`, `event` and one `data` line; the retry hint and other comments carry no event.
  private readonly parser = createParser({
    onEvent: ({ id, event, data }) => {
      if (id !== undefined && event !== undefined) this.ready.push({ id: Number(id), type: event, data });
    },
    onComment: (comment) => {
      // The one comment a wait reads: an answer its credential sent from a form was refused.
      if (comment.startsWith(REFUSED_COMMENT)) this.ready.push({ id: 0, type: ANSWER_REFUSED, data: comment.slice(REFUSED_COMMENT.length) });
    },
  });
  private ended = false;
  // A read the runtime has not answered yet: a wait cut short by its signal picks it up next time, so no chunk is lost.
  private reading: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;

  private constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /**
   * The stream of a chat the caller may read, or the refusal (429 too_many_streams with no place free); `after`: resumes
   * after that event id (a snapshot first when it is no longer kept); scope: what the caller follows with.
   */
  static async open(chats: ChatService, chat: ChatRef, after?: number, scope?: Scope): Promise<Served<ChatFollower>> {
    const opened = await chats.follow(chat, after ?? null, scope);
    return opened.ok ? { ...opened, body: new ChatFollower(opened.body.stream) } : opened;
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
      else this.parser.feed(this.decoder.decode(chunk.value, { stream: true }));
    }
    return this.ready.shift()!;
  }

  /** Ends the stream from this side: the chat object drops its listener and the stream place is freed. */
  close(): void {
    this.ended = true;
    this.reader.cancel().catch(() => undefined);
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
