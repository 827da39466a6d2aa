import { DatabaseUnavailable, isDatabaseUnavailable } from "./errors";
import { log } from "../log";

/** A value and when it was read (the read's start, so its age is never understated). */
export type Seen<V> = { value: V; at: number };

/**
 * Values read from D1 that change rarely (membership, a project's state, the maintenance flag),
 * kept in isolate memory: reused for `freshMs` after they were read, re-read after that, and while
 * D1 cannot answer, served for up to `staleMs` after they were read. Past that the read throws
 * DatabaseUnavailable, which answers 503.
 */
export class ReadMostly<V> {
  private readonly held = new Map<string, Seen<V>>();
  // After a failed read, the last value is reused this long before D1 is tried again: an overloaded D1 is not hammered.
  private readonly retryAt = new Map<string, number>();
  // Bumped by forget, so a read that began before a change made here cannot store what it read.
  private generation = 0;

  constructor(
    private readonly name: string,
    private readonly options: { freshMs: number; staleMs: number; maxEntries?: number },
  ) {}

  /**
   * The value for key: held while fresh, else read. Concurrent callers do not share a pending read:
   * each is a different request, and an I/O object (a Durable Object stub) made after awaiting
   * another request's read belongs to that request; used later it fails ("Cannot perform I/O on
   * behalf of a different request"), as 500s under load showed. A burst when a value expires costs
   * one read per request in flight, once per freshMs.
   */
  async get(key: string, read: () => Promise<V>): Promise<Seen<V>> {
    const held = this.held.get(key);
    const now = Date.now();
    const age = held ? now - held.at : Infinity;
    if (held && (age < this.options.freshMs || (now < (this.retryAt.get(key) ?? 0) && age < this.options.staleMs))) return held;
    return this.read(key, read);
  }

  /** Keeps a value read elsewhere (by the Worker that called this object) when it is newer than the one held. */
  offer(key: string, seen: Seen<V>): void {
    const held = this.held.get(key);
    if (held && held.at >= seen.at) return;
    if (!held && this.held.size >= (this.options.maxEntries ?? 10_000)) this.held.clear();
    this.held.set(key, seen);
  }

  /** Forgets one key, or all, so a change made in this isolate is seen at once. */
  forget(key?: string): void {
    this.generation++;
    if (key === undefined) {
      this.held.clear();
      this.retryAt.clear();
    } else {
      this.held.delete(key);
      this.retryAt.delete(key);
    }
  }

  private async read(key: string, read: () => Promise<V>): Promise<Seen<V>> {
    const at = Date.now();
    const generation = this.generation;
    try {
      const seen = { value: await read(), at };
      if (generation === this.generation) this.offer(key, seen);
      this.retryAt.delete(key);
      return seen;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const held = this.held.get(key);
      const usable = held !== undefined && Date.now() - held.at < this.options.staleMs;
      log.warn("d1_unavailable", { read: this.name, served: usable ? "last value seen" : "nothing" }, error);
      if (!usable) throw new DatabaseUnavailable(error);
      if (this.retryAt.size >= (this.options.maxEntries ?? 10_000)) this.retryAt.clear();
      this.retryAt.set(key, Date.now() + this.options.freshMs);
      return held;
    }
  }
}
