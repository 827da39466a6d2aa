/** The chat's event log: every change the chat object records, in order, kept for resuming streams. */
export type ChatEventType = "chat" | "queue" | "message" | "message.delta";

// Kept at least this long; an older resume point gets a fresh snapshot.
const EVENTS_KEPT_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
// The newest events stay encoded in memory, so a burst fans out to many listeners without re-reading storage.
const RECENT_KEPT = 256;
const RECENT_MAX_BYTES = 2 * 1024 * 1024;
// A SQLite row holds at most 2 MB; larger event data (a long queue of long messages) goes in parts.
const PART_CHARS = 256 * 1024;

const encoder = new TextEncoder();

/** One Server-Sent Events frame: id, type and a single data line (JSON never contains a raw newline). */
export function sseFrame(id: number, type: string, json: string): Uint8Array {
  return encoder.encode(`id: ${id}\nevent: ${type}\ndata: ${json}\n\n`);
}

export const sseComment = (text: string) => encoder.encode(`: ${text}\n\n`);

export function concatFrames(frames: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(frames.reduce((n, f) => n + f.byteLength, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.byteLength;
  }
  return out;
}

type EventRow = { id: number; type: string; data: string; parts: number };

/** Cuts text into pieces of at most `size` UTF-16 units, never between the two halves of a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  const parts: string[] = [];
  let at = 0;
  do {
    let end = Math.min(text.length, at + size);
    const code = text.charCodeAt(end - 1);
    // Keep a pair whole: cut before it, or after it when it alone fills the part.
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end += end - 1 > at ? -1 : 1;
    parts.push(text.slice(at, end));
    at = end;
  } while (at < text.length);
  return parts;
}

export class EventLog {
  private recent: { id: number; frame: Uint8Array }[] = [];
  private recentBytes = 0;
  // Every event with a larger id is in `recent`.
  private recentFloor: number;
  private prunedAt = 0;

  constructor(private readonly sql: SqlStorage) {
    this.recentFloor = this.newestId();
  }

  /** Appends an event; call in the same synchronous stretch as the change it describes. */
  append(type: ChatEventType, json: string, now: number): number {
    const parts = splitText(json, PART_CHARS);
    const id = this.sql.exec<{ id: number }>("INSERT INTO events (type, data, at, parts) VALUES (?, ?, ?, ?) RETURNING id", type, parts[0], now, parts.length).one().id;
    for (let i = 1; i < parts.length; i++) this.sql.exec("INSERT INTO event_parts (event_id, part, data) VALUES (?, ?, ?)", id, i, parts[i]);
    const frame = sseFrame(id, type, json);
    this.recent.push({ id, frame });
    this.recentBytes += frame.byteLength;
    while (this.recent.length > RECENT_KEPT || (this.recentBytes > RECENT_MAX_BYTES && this.recent.length > 1)) {
      const dropped = this.recent.shift()!;
      this.recentBytes -= dropped.frame.byteLength;
      this.recentFloor = dropped.id;
    }
    if (now - this.prunedAt >= PRUNE_EVERY_MS) this.prune(now);
    return id;
  }

  newestId(): number {
    return this.sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM events").one().id ?? this.prunedThrough();
  }

  /** The data of the newest event of a type, to tell whether a state has changed since it was published. */
  lastData(type: ChatEventType): string | undefined {
    const row = this.sql.exec<EventRow>("SELECT id, type, data, parts FROM events WHERE type = ? ORDER BY id DESC LIMIT 1", type).toArray()[0];
    return row && this.wholeData(row);
  }

  /** Whether every event after `id` is still kept (and `id` is one this log gave out). */
  canResumeFrom(id: number): boolean {
    return id >= this.prunedThrough() && id <= this.newestId();
  }

  /** Encoded events after `cursor`, oldest first, up to about maxBytes (at least one event). */
  framesAfter(cursor: number, maxBytes: number): { frames: Uint8Array[]; last: number } {
    const frames: Uint8Array[] = [];
    let last = cursor;
    let bytes = 0;
    if (cursor >= this.recentFloor) {
      for (const event of this.recent) {
        if (event.id <= cursor) continue;
        if (bytes > 0 && bytes + event.frame.byteLength > maxBytes) break;
        frames.push(event.frame);
        bytes += event.frame.byteLength;
        last = event.id;
      }
      return { frames, last };
    }
    for (const row of this.sql.exec<EventRow>("SELECT id, type, data, parts FROM events WHERE id > ? ORDER BY id LIMIT 256", cursor)) {
      const frame = sseFrame(row.id, row.type, this.wholeData(row));
      if (bytes > 0 && bytes + frame.byteLength > maxBytes) break;
      frames.push(frame);
      bytes += frame.byteLength;
      last = row.id;
    }
    return { frames, last };
  }

  private wholeData(row: EventRow): string {
    if (row.parts === 1) return row.data;
    const rest = this.sql.exec<{ data: string }>("SELECT data FROM event_parts WHERE event_id = ? ORDER BY part", row.id).toArray();
    return row.data + rest.map((r) => r.data).join("");
  }

  private prunedThrough(): number {
    return this.sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = 'events_pruned_through'").toArray()[0]?.value ?? 0;
  }

  /** Drops events older than the retention; remembers the newest dropped id so older resume points get a snapshot. */
  private prune(now: number): void {
    this.prunedAt = now;
    const newestOld = this.sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM events WHERE at < ?", now - EVENTS_KEPT_MS).one().id;
    if (newestOld === null) return;
    this.sql.exec("DELETE FROM events WHERE id <= ?", newestOld);
    this.sql.exec("DELETE FROM event_parts WHERE event_id <= ?", newestOld);
    this.sql.exec("INSERT INTO meta (key, value) VALUES ('events_pruned_through', ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)", newestOld);
  }
}
