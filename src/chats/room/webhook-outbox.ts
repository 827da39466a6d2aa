import type { WebhookEventType } from "../event-registry";
import { DAY_MS } from "../../time";

// Kept past the last retry of the schedule (about 17.5 hours after the hand-off) so every attempt can read its payload.
const KEPT_MS = 2 * DAY_MS;

export type OutboxRow = { id: string; type: WebhookEventType; ref: string; at: number };

/**
 * The chat's webhook outbox: an event is written in the same synchronous stretch as the change that
 * causes it (so it commits with it), then handed to the delivery queue and marked. The row keeps
 * what the payload needs (a message's or a submission's id, or the chat as it was), not a copy of a
 * long reply: deliveries read the payload from here.
 */
export class WebhookOutbox {
  // Something was recorded that is not handed off yet (undefined: not looked at since the object started).
  private waiting: boolean | undefined;

  constructor(private readonly sql: SqlStorage) {}

  record(type: WebhookEventType, ref: string, now: number): void {
    this.sql.exec("INSERT INTO webhook_outbox (id, type, ref, at) VALUES (?, ?, ?, ?)", crypto.randomUUID(), type, ref, now);
    this.waiting = true;
  }

  hasWaiting(): boolean {
    this.waiting ??= this.sql.exec("SELECT 1 FROM webhook_outbox WHERE handed_off_at IS NULL LIMIT 1").toArray().length > 0;
    return this.waiting;
  }

  /** The oldest events not handed off yet. */
  waitingEvents(limit: number): OutboxRow[] {
    const rows = this.sql.exec<OutboxRow>("SELECT id, type, ref, at FROM webhook_outbox WHERE handed_off_at IS NULL ORDER BY seq LIMIT ?", limit).toArray();
    if (rows.length === 0) this.waiting = false;
    return rows;
  }

  handedOff(ids: string[], now: number): void {
    for (const id of ids) this.sql.exec("UPDATE webhook_outbox SET handed_off_at = ? WHERE id = ?", now, id);
    // Counted from the hand-off, not the event: an event handed off late still gets its whole schedule.
    this.sql.exec("DELETE FROM webhook_outbox WHERE handed_off_at < ?", now - KEPT_MS);
    this.waiting = undefined;
  }

  event(id: string): OutboxRow | undefined {
    return this.sql.exec<OutboxRow>("SELECT id, type, ref, at FROM webhook_outbox WHERE id = ?", id).toArray()[0];
  }
}
