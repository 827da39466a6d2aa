import { metaValue } from "../../db/object-schema";
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

type EventRow = { id: number; last_id: number | null; type: string; data: string; parts: number; end_offset: number | null; at: number };
type StoredEvent = { id: number; type: string; data: string };

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
 *
 * An event is written as a row of its own, so it is durable before any listener sees it; when a reply
 * ends, the rows written since the last fold become one (`fold`): a run of consecutive events, a line
 * "type data" each, from which a replay reads the very frames it would have read from single rows.
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
  // The last event id of the newest run (undefined: not read yet); the next fold starts after it.
  private foldedThrough: number | undefined;

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
    this.insertRow(id, null, type, json, now, this.endOffset + frame.byteLength);
    this.lastId = id;
    this.endOffset += frame.byteLength;
    this.recent.push({ id, frame });
    this.recentBytes += frame.byteLength;
    while (this.recent.length > RECENT_KEPT || (this.recentBytes > RECENT_MAX_BYTES && this.recent.length > 1)) this.recentBytes -= this.recent.shift()!.frame.byteLength;
    if (now - this.prunedAt >= PRUNE_EVERY_MS) this.prune(now);
    if (this.endOffset - (this.keptFrom ??= this.metaValue("events_pruned_offset")) > REPLAY_MAX_BYTES + PRUNE_SLACK_BYTES) this.pruneBeyondReplay();
    return id;
  }

  /**
   * Folds the events written one per row since the last fold into one row (a reply's parts, the changes
   * around it): the chat keeps a row or two per turn rather than one per event, and replays the same frames.
   */
  fold(): void {
    this.foldedThrough ??= this.sql.exec<{ last_id: number }>("SELECT last_id FROM events WHERE last_id IS NOT NULL ORDER BY id DESC LIMIT 1").toArray()[0]?.last_id ?? 0;
    // Rows from before offsets were kept stay as they are: no resume can start among them.
    const rows = this.sql.exec<EventRow>("SELECT * FROM events WHERE id > ? AND last_id IS NULL AND end_offset IS NOT NULL ORDER BY id", this.foldedThrough).toArray();
    const first = rows[0];
    const last = rows.at(-1);
    // A run's ids are consecutive: rows with a gap among them (none expected) stay as they are.
    if (!first || !last || rows.length < 2 || last.id - first.id + 1 !== rows.length) return;
    const lines = rows.map((row) => `${row.type} ${this.wholeData(row)}`).join("\n");
    this.sql.exec("DELETE FROM events WHERE id BETWEEN ? AND ?", first.id, last.id);
    if (rows.some((row) => row.parts > 1)) this.sql.exec("DELETE FROM event_parts WHERE event_id BETWEEN ? AND ?", first.id, last.id);
    this.insertRow(first.id, last.id, "", lines, last.at, last.end_offset!);
    this.foldedThrough = last.id;
  }

  /** A row of one event (lastId null) or of a run of them (type "", a line each), its data in parts when long. */
  private insertRow(id: number, lastId: number | null, type: string, data: string, at: number, endOffset: number): void {
    const parts = splitText(data, PART_CHARS);
    this.sql.exec("INSERT INTO events (id, last_id, type, data, at, parts, end_offset) VALUES (?, ?, ?, ?, ?, ?, ?)", id, lastId, type, parts[0], at, parts.length, endOffset);
    for (let i = 1; i < parts.length; i++) this.sql.exec("INSERT INTO event_parts (event_id, part, data) VALUES (?, ?, ?)", id, i, parts[i]);
  }

  newestId(): number {
    return this.lastId;
  }

  /** The data of the newest event of a type, to tell whether a state has changed since it was published. */
  lastData(type: ChatEventType): string | undefined {
    for (let before = Number.MAX_SAFE_INTEGER; ; ) {
      const row = this.sql.exec<EventRow>("SELECT * FROM events WHERE id < ? AND (type = ? OR last_id IS NOT NULL) ORDER BY id DESC LIMIT 1", before, type).toArray()[0];
      if (!row) return undefined;
      const found = this.eventsOf(row).findLast((e) => e.type === type);
      if (found) return found.data;
      before = row.id;
    }
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
    // From the row that holds the cursor (a run may hold it and more), in id order.
    const rows = this.sql.exec<EventRow>("SELECT * FROM events WHERE id >= (SELECT COALESCE(MAX(id), 0) FROM events WHERE id <= ?) ORDER BY id LIMIT 64", cursor);
    for (const row of rows) {
      for (const event of this.eventsOf(row)) {
        if (event.id <= cursor) continue;
        const frame = sseFrame(event.id, event.type, event.data);
        if (bytes > 0 && bytes + frame.byteLength > maxBytes) return { frames, last };
        frames.push(frame);
        bytes += frame.byteLength;
        last = event.id;
      }
    }
    return { frames, last };
  }

  /**
   * A message's text as of an event: the content of its newest `message` event up to it and the deltas after that; null
   * when that event is no longer kept. Read backwards from the event, so it costs the rows since the message's last word.
   */
  textAt(messageId: string, eventId: number): string | null {
    const deltas: string[] = [];
    for (let before = eventId + 1; ; ) {
      const row = this.sql.exec<EventRow>("SELECT * FROM events WHERE id < ? ORDER BY id DESC LIMIT 1", before).toArray()[0];
      if (!row) return null;
      for (const event of this.eventsOf(row).reverse()) {
        if (event.id > eventId || (event.type !== "message" && event.type !== "message.delta") || !event.data.includes(messageId)) continue;
        const data = JSON.parse(event.data) as { id: string; text?: string; content?: string };
        if (data.id !== messageId) continue;
        if (event.type === "message") return data.content + deltas.reverse().join("");
        deltas.push(data.text ?? "");
      }
      before = row.id;
    }
  }

  /** The events a row holds: its one, or its run's (ids consecutive from the row's). */
  private eventsOf(row: EventRow): StoredEvent[] {
    const data = this.wholeData(row);
    if (row.last_id === null) return [{ id: row.id, type: row.type, data }];
    return data.split("\n").map((line, i) => {
      const space = line.indexOf(" ");
      return { id: row.id + i, type: line.slice(0, space), data: line.slice(space + 1) };
    });
  }

  /** Where an event ends in the stream of frames; undefined when it is not kept (or older than offsets). */
  private offsetOf(id: number): number | undefined {
    const row = this.rowHolding(id);
    if (!row || row.end_offset === null) return undefined;
    if (row.last_id === null) return row.end_offset;
    // In a run: the run's end, less the frames after the event.
    let offset = row.end_offset;
    for (const event of this.eventsOf(row).reverse()) {
      if (event.id === id) return offset;
      offset -= sseFrame(event.id, event.type, event.data).byteLength;
    }
    return undefined;
  }

  /** The row that holds an event, undefined when it is not kept. */
  private rowHolding(id: number): EventRow | undefined {
    const row = this.rowFrom(id);
    return row && (row.last_id ?? row.id) >= id ? row : undefined;
  }

  /** The newest row that starts at or before an event id (a run starting there may reach past it). */
  private rowFrom(id: number): EventRow | undefined {
    return this.sql.exec<EventRow>("SELECT * FROM events WHERE id <= ? ORDER BY id DESC LIMIT 1", id).toArray()[0];
  }

  private wholeData(row: EventRow): string {
    if (row.parts === 1) return row.data;
    const rest = this.sql.exec<{ data: string }>("SELECT data FROM event_parts WHERE event_id = ? ORDER BY part", row.id).toArray();
    return row.data + rest.map((r) => r.data).join("");
  }

  private metaValue(key: string): number {
    return metaValue(this.sql, key) ?? 0;
  }

  /** Drops events older than the retention (a run goes once its newest is). */
  private prune(now: number): void {
    this.prunedAt = now;
    const newestOld = this.sql
      .exec<{ id: number; last_id: number | null }>("SELECT id, last_id FROM events WHERE at < ? ORDER BY id DESC LIMIT 1", now - EVENTS_KEPT_MS)
      .toArray()[0];
    if (newestOld) this.dropThrough(newestOld.last_id ?? newestOld.id);
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

  /**
   * Drops the rows wholly at or before an event id (a run that reaches past it stays whole); remembers
   * where they ended, so resume points at or before it get a snapshot.
   */
  private dropThrough(id: number): void {
    let row = this.rowFrom(id);
    if (row && (row.last_id ?? row.id) > id) row = this.rowFrom(row.id - 1);
    if (!row) return;
    this.sql.exec("DELETE FROM events WHERE id <= ?", row.id);
    this.sql.exec("DELETE FROM event_parts WHERE event_id <= ?", row.id);
    const keep = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)";
    this.sql.exec(keep, "events_pruned_through", row.last_id ?? row.id);
    if (row.end_offset !== null) this.sql.exec(keep, "events_pruned_offset", row.end_offset);
    this.keptFrom = undefined;
  }
}
