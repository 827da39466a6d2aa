import type { WebhookEventType } from "../event-registry";
import { PUSH_EVENT, type OutboxEventType } from "../webhook-task";
import { DAY_MS } from "../../time";
import { SWITCH_LEASE_MS, type SwitchLease } from "../webhook-switch";

// Kept past the last retry of the schedule (about 17.5 hours after the hand-off) so every attempt can read its payload.
const KEPT_MS = 2 * DAY_MS;

export type OutboxRow = { id: string; type: OutboxEventType; ref: string; at: number };

/**
 * The chat's webhook outbox: an event is written in the same synchronous stretch as the change that
 * causes it (so it commits with it), then handed to the delivery queue and marked. The row keeps
 * what the payload needs (a message's or a submission's id, or the chat as it was), not a copy of a
 * long reply: deliveries read the payload from here.
 *
 * Nothing is recorded while the chat knows its project has no enabled endpoint: its list sync says so
 * with a lease, and the project's chat list tells every chat holding one before an endpoint's creation
 * is answered. A chat that has not been told, or whose lease ended, records as if endpoints existed.
 */
export class WebhookOutbox {
  // Something was recorded that is not handed off yet (undefined: not looked at since the object started).
  private waiting: boolean | undefined;
  // What the chat was last told of the project's webhook switch (undefined: not read yet; null: never told),
  // and the lease its stored copy holds (the copy in memory may hold a longer one, renewed by syncs since).
  private told: SwitchLease | null | undefined;
  private storedUntil = 0;

  constructor(private readonly sql: SqlStorage) {}

  record(type: WebhookEventType, ref: string, now: number): void {
    if (!this.listening(now)) return;
    this.sql.exec("INSERT INTO webhook_outbox (id, type, ref, at) VALUES (?, ?, ?, ?)", crypto.randomUUID(), type, ref, now);
    this.waiting = true;
  }

  /** An A2A push event (push-configs.ts): recorded whatever the switch says, since the chat itself holds the push configs. */
  recordPush(ref: string, now: number): void {
    this.sql.exec("INSERT INTO webhook_outbox (id, type, ref, at) VALUES (?, ?, ?, ?)", crypto.randomUUID(), PUSH_EVENT, ref, now);
    this.waiting = true;
  }

  /** False only while a lease that the project has no enabled endpoint holds. */
  listening(now: number): boolean {
    const told = this.switchTold();
    return !told || told.on || now >= told.until;
  }

  /**
   * What the project's chat list says of its webhook switch (with each list sync, or told when it flipped on).
   * A word older than one already heard is ignored. The stored copy is written when the switch changed or
   * half its lease is used: an object that restarts with a shorter lease than it was given is only more cautious.
   */
  learn(word: SwitchLease, now: number): void {
    const told = this.switchTold();
    if (told && word.version < told.version) return;
    const until = word.on ? 0 : word.until;
    const same = told !== null && told.version === word.version && told.on === word.on;
    if (!same || (!word.on && this.storedUntil - now < SWITCH_LEASE_MS / 2)) {
      this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('webhook_switch_version', ?), ('webhook_switch_off_until', ?)", word.version, until);
      this.storedUntil = until;
    }
    this.told = { version: word.version, on: word.on, until: same ? Math.max(told.until, until) : until };
  }

  private switchTold(): SwitchLease | null {
    if (this.told === undefined) {
      const rows = this.sql.exec<{ key: string; value: number }>("SELECT key, value FROM meta WHERE key IN ('webhook_switch_version', 'webhook_switch_off_until')").toArray();
      const value = (key: string) => rows.find((r) => r.key === key)?.value;
      const version = value("webhook_switch_version");
      // 0: the switch was on when last told.
      const until = value("webhook_switch_off_until") ?? 0;
      this.storedUntil = until;
      this.told = version === undefined ? null : { version, on: until === 0, until };
    }
    return this.told;
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
