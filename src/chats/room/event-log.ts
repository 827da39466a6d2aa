import { withinUnits } from "../../text";
import type { ChatEventType } from "../event-registry";

// Kept at least this long; an older resume point gets a fresh snapshot.
const EVENTS_KEPT_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
// A resume point whose replay would pass this gets a fresh snapshot instead (then the history has the messages).
export const REPLAY_MAX_BYTES = 8 * 1024 * 1024;
// So no event further back than REPLAY_MAX_BYTES can be replayed, and the log drops such events in batches of this
// much: a chat keeps about 10 MB of events however much it is sent, not a day's worth (clients see no difference).
const PRUNE_SLACK_BYTES = 2 * 1024 * 1024;
// The newest events stay encoded in memory, so a burst fans out to many listeners without re-reading storage.
const RECENT_KEPT = 256;
const RECENT_MAX_BYTES = 2 * 1024 * 1024;
// A SQLite row holds at most 2 MB; larger event data (a long reply) goes in parts.
const PART_CHARS = 256 * 1024;

const encoder = new TextEncoder();

/** One Server-Sent Events frame: id, type and a single data line (JSON never contains a raw newline). */
export function sseFrame(id: number, type: string, json: string): Uint8Array {
  return encoder.encode(`id: ${id}\nevent: ${type}\ndata: ${json}\n\n`);
}

export const sseComment = (text: string) => encoder.encode(`: ${text}\n\n`);

type EventRow = { id: number; type: string; data: string; parts: number };

/** Cuts text into pieces of at most `size` UTF-16 units, never between the two halves of a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const parts: string[] = [];
  let at = 0;
  do {
    // Keep a pair whole: cut before it, or after it when it alone fills the part.
    const part = withinUnits(text.slice(at), size) || text.slice(at, at + 2);
    parts.push(part);
    at += part.length;
  } while (at < text.length);
  return parts;
}

/**
 * Events are stored with the byte offset at which each one ends in the stream of frames (from the
 * first event that kept one), so the size of a replay is a subtraction. The encoded frames of the
 * newest events are held once and handed to every listener as they are.
 */
export class EventLog {
  // The newest events, encoded; their ids are consecutive, so an id finds its place by subtraction.
  private recent: { id: number; frame: Uint8Array }[] = [];
  private recentBytes = 0;
  private prunedAt = 0;
  private lastId: number;
  private endOffset: number;
  // Where the kept events begin in the stream of frames (undefined: not read yet).
  private keptFrom: number | undefined;

  constructor(private readonly sql: SqlStorage) {
    // AUTOINCREMENT never gives an id out twice: the next one is the sequence's last plus one.
    const sequence = this.sql.exec<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").toArray()[0]?.seq ?? 0;
    this.lastId = Math.max(sequence, this.metaValue("events_pruned_through"));
    this.endOffset = this.sql.exec<{ end_offset: number | null }>("SELECT end_offset FROM events ORDER BY id DESC LIMIT 1").toArray()[0]?.end_offset ?? 0;
  }

  /** Appends an event, in one statement; call in the same synchronous stretch as the change it describes. */
  append(type: ChatEventType, json: string, now: number): number {
    const id = this.lastId + 1;
    const frame = sseFrame(id, type, json);
    const parts = splitText(json, PART_CHARS);
    this.sql.exec("INSERT INTO events (id, type, data, at, parts, end_offset) VALUES (?, ?, ?, ?, ?, ?)", id, type, parts[0], now, parts.length, this.endOffset + frame.byteLength);
    for (let i = 1; i < parts.length; i++) this.sql.exec("INSERT INTO event_parts (event_id, part, data) VALUES (?, ?, ?)", id, i, parts[i]);
    this.lastId = id;
    this.endOffset += frame.byteLength;
    this.recent.push({ id, frame });
    this.recentBytes += frame.byteLength;
    while (this.recent.length > RECENT_KEPT || (this.recentBytes > RECENT_MAX_BYTES && this.recent.length > 1)) this.recentBytes -= this.recent.shift()!.frame.byteLength;
    if (now - this.prunedAt >= PRUNE_EVERY_MS) this.prune(now);
    if (this.endOffset - (this.keptFrom ??= this.metaValue("events_pruned_offset")) > REPLAY_MAX_BYTES + PRUNE_SLACK_BYTES) this.pruneBeyondReplay();
    return id;
  }

  newestId(): number {
    return this.lastId;
  }

  /** The data of the newest event of a type, to tell whether a state has changed since it was published. */
  lastData(type: ChatEventType): string | undefined {
    const row = this.sql.exec<EventRow>("SELECT id, type, data, parts FROM events WHERE type = ? ORDER BY id DESC LIMIT 1", type).toArray()[0];
    return row && this.wholeData(row);
  }

  /**
   * Whether a stream may resume after `id`: every event after it is kept, it is one this log gave
   * out, it comes after the events of the old shape (a follower there may hold queue entries that left
   * unannounced, so it needs a snapshot), and the replay stays within maxBytes.
   */
  canResumeFrom(id: number, maxBytes: number): boolean {
    const pruned = this.metaValue("events_pruned_through");
    const base = this.metaValue("events_offset_base");
    if (id < pruned || (base > 0 && id <= base) || id > this.lastId) return false;
    const after = id === pruned ? this.metaValue("events_pruned_offset") : this.offsetOf(id);
    return after !== undefined && this.endOffset - after <= maxBytes;
  }

  /**
   * Encoded events after `cursor`, oldest first, up to about maxBytes (at least one); the frames are
   * shared, not copied. `lost` when events after the cursor were dropped: a listener there cannot go on without a gap.
   */
  framesAfter(cursor: number, maxBytes: number): { frames: Uint8Array[]; last: number; lost?: true } {
    const frames: Uint8Array[] = [];
    let last = cursor;
    let bytes = 0;
    const first = this.recent[0];
    if (first && cursor >= first.id - 1) {
      for (let i = cursor + 1 - first.id; i < this.recent.length; i++) {
        const event = this.recent[i]!;
        if (bytes > 0 && bytes + event.frame.byteLength > maxBytes) break;
        frames.push(event.frame);
        bytes += event.frame.byteLength;
        last = event.id;
      }
      return { frames, last };
    }
    if (cursor < this.metaValue("events_pruned_through")) return { frames, last, lost: true };
    for (const row of this.sql.exec<EventRow>("SELECT id, type, data, parts FROM events WHERE id > ? ORDER BY id LIMIT 256", cursor)) {
      const frame = sseFrame(row.id, row.type, this.wholeData(row));
      if (bytes > 0 && bytes + frame.byteLength > maxBytes) break;
      frames.push(frame);
      bytes += frame.byteLength;
      last = row.id;
    }
    return { frames, last };
  }

  private offsetOf(id: number): number | undefined {
    return this.sql.exec<{ end_offset: number | null }>("SELECT end_offset FROM events WHERE id = ?", id).toArray()[0]?.end_offset ?? undefined;
  }

  private wholeData(row: EventRow): string {
    if (row.parts === 1) return row.data;
    const rest = this.sql.exec<{ data: string }>("SELECT data FROM event_parts WHERE event_id = ? ORDER BY part", row.id).toArray();
    return row.data + rest.map((r) => r.data).join("");
  }

  private metaValue(key: string): number {
    return this.sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value ?? 0;
  }

  /** Drops events older than the retention. */
  private prune(now: number): void {
    this.prunedAt = now;
    const newestOld = this.sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM events WHERE at < ?", now - EVENTS_KEPT_MS).one().id;
    if (newestOld !== null) this.dropThrough(newestOld);
  }

  /** Drops the events no replay can reach: those that end more than REPLAY_MAX_BYTES before the newest. */
  private pruneBeyondReplay(): void {
    const cut = this.endOffset - REPLAY_MAX_BYTES;
    // Offsets grow with ids: the newest event ending at or before the cut, by halving the kept range.
    let low = Math.max(this.metaValue("events_pruned_through"), this.metaValue("events_offset_base"));
    let high = this.lastId;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      const offset = this.offsetOf(mid);
      if (offset !== undefined && offset <= cut) low = mid;
      else high = mid - 1;
    }
    this.dropThrough(low);
  }

  /** Drops events up to an id; remembers it (and where it ended) so resume points at or before it get a snapshot. */
  private dropThrough(id: number): void {
    const offset = this.offsetOf(id);
    this.sql.exec("DELETE FROM events WHERE id <= ?", id);
    this.sql.exec("DELETE FROM event_parts WHERE event_id <= ?", id);
    const keep = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)";
    this.sql.exec(keep, "events_pruned_through", id);
    if (offset !== undefined) this.sql.exec(keep, "events_pruned_offset", offset);
    this.keptFrom = undefined;
  }
}
