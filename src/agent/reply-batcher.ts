// A listener sees text at most this long after the model wrote it; the reply is written at most this often.
export const REPLY_FLUSH_MS = 250;

/**
 * Gathers a model's text as it streams and hands it on in batches: the first piece at once, then at
 * most one batch every REPLY_FLUSH_MS. So a reply of a thousand tokens costs a few writes a second of
 * writing, not one per token, and no piece waits longer than REPLY_FLUSH_MS.
 */
export class ReplyBatcher {
  private pending = "";
  private lastFlush = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  add(text: string): void {
    if (!text) return;
    this.pending += text;
    if (this.timer) return;
    const wait = this.lastFlush + REPLY_FLUSH_MS - this.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Writes what is gathered now (the stream ended, or steering needs the reply so far). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const text = this.pending;
    this.pending = "";
    this.lastFlush = this.now();
    this.write(text);
  }

  /** Drops what is gathered (the task was stopped: nothing more is written). */
  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = "";
  }
}
