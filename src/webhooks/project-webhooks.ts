import { DurableObject } from "cloudflare:workers";
import { migrateSchema } from "../db/object-schema";
import type { Env } from "../env";
import type { WebhookDelivery, WebhookEndpoint, WebhookEventType } from "./schemas";
import { iso } from "../time";

export const WEBHOOKS_PER_PROJECT = 10;
// After this many deliveries in a row end failed, the endpoint is disabled.
export const FAILURES_TO_DISABLE = 50;
// The deliveries listed (and, once ended, kept) per endpoint.
const DELIVERIES_KEPT = 100;
// An attempt holds its delivery this long (a 15 s request and the calls around it), so another copy of its message waits.
const IN_FLIGHT_MS = 60_000;
// A retry's message may come this much before its time (queue delays are not exact).
const SCHEDULE_SLACK_MS = 2_000;

const MIGRATIONS = [
  [
    `CREATE TABLE endpoints (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, url TEXT NOT NULL, events TEXT NOT NULL,
       description TEXT NOT NULL, sealed_secret TEXT NOT NULL, created_at TEXT NOT NULL, disabled_at TEXT, failures_in_a_row INTEGER NOT NULL DEFAULT 0)`,
    `CREATE TABLE deliveries (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, webhook_id TEXT NOT NULL UNIQUE, endpoint_id TEXT NOT NULL,
       event_type TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_status_code INTEGER, last_error TEXT,
       next_attempt_at TEXT, created_at TEXT NOT NULL, delivered_at TEXT, next_attempt_ms INTEGER, in_flight_until INTEGER)`,
    "CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, seq)",
  ],
];

type EndpointRow = {
  id: string;
  url: string;
  events: string;
  description: string;
  sealed_secret: string;
  created_at: string;
  disabled_at: string | null;
  failures_in_a_row: number;
};
type DeliveryRow = {
  next_attempt_ms: number | null;
  in_flight_until: number | null;
  id: string;
  webhook_id: string;
  endpoint_id: string;
  event_type: WebhookEventType;
  status: WebhookDelivery["status"];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
};
export type NewEndpoint = { url: string; events: WebhookEventType[]; description: string; sealedSecret: string };
export type AttemptPlan = { kind: "attempt"; url: string; sealedSecret: string; attempt: number } | { kind: "skip" };
export type AttemptOutcome = { ok: boolean; statusCode: number | null; error: string | null; nextAttemptAt: number | null };

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events),
  description: r.description,
  createdAt: r.created_at,
  disabledAt: r.disabled_at,
});
const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  eventType: r.event_type,
  webhookId: r.webhook_id,
  status: r.status,
  attempts: r.attempts,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

/**
 * One object per project (named by its id): its webhook endpoints, their sealed secrets, the
 * delivery log and the count of failed deliveries in a row. Chats ask it who subscribes to an
 * event; the queue consumer asks it, before each attempt, whether the attempt may start (the
 * endpoint still exists and is enabled, the delivery has not ended) and reports the outcome.
 */
export class ProjectWebhooks extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrateSchema(this.sql, MIGRATIONS);
  }

  async create(endpoint: NewEndpoint): Promise<{ kind: "created"; endpoint: WebhookEndpoint } | { kind: "limit" }> {
    const count = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM endpoints").one().n;
    if (count >= WEBHOOKS_PER_PROJECT) return { kind: "limit" };
    const row = this.sql
      .exec<EndpointRow>(
        "INSERT INTO endpoints (id, url, events, description, sealed_secret, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
        crypto.randomUUID(),
        endpoint.url,
        JSON.stringify(endpoint.events),
        endpoint.description,
        endpoint.sealedSecret,
        iso(Date.now()),
      )
      .one();
    return { kind: "created", endpoint: toEndpoint(row) };
  }

  async list(): Promise<WebhookEndpoint[]> {
    return this.sql.exec<EndpointRow>("SELECT * FROM endpoints ORDER BY seq").toArray().map(toEndpoint);
  }

  /** Deletes an endpoint and its log; false when there was none. An attempt that has not begun never starts. */
  async remove(endpointId: string): Promise<boolean> {
    const removed = this.sql.exec("DELETE FROM endpoints WHERE id = ? RETURNING id", endpointId).toArray().length > 0;
    if (removed) this.sql.exec("DELETE FROM deliveries WHERE endpoint_id = ?", endpointId);
    return removed;
  }

  /** The newest deliveries of an endpoint, newest first; null when there is no such endpoint. */
  async deliveries(endpointId: string): Promise<WebhookDelivery[] | null> {
    if (!this.endpoint(endpointId)) return null;
    return this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?", endpointId, DELIVERIES_KEPT).toArray().map(toDelivery);
  }

  /** The enabled endpoints, each with the event types it receives: one call serves a whole hand-off. */
  async subscriptions(): Promise<{ id: string; events: WebhookEventType[] }[]> {
    return this.sql
      .exec<EndpointRow>("SELECT * FROM endpoints WHERE disabled_at IS NULL ORDER BY seq")
      .toArray()
      .map((r) => ({ id: r.id, events: JSON.parse(r.events) }));
  }

  /** Where an endpoint's deliveries go and the secret to sign them, while it exists and is enabled. */
  async target(endpointId: string): Promise<{ url: string; sealedSecret: string } | null> {
    const endpoint = this.endpoint(endpointId);
    return endpoint && !endpoint.disabled_at ? { url: endpoint.url, sealedSecret: endpoint.sealed_secret } : null;
  }

  /**
   * Right before an attempt: whether it may start (the endpoint still exists and is enabled, the
   * delivery has not ended, no other copy of its message is attempting it or ahead of its schedule);
   * counts it and claims it until the outcome is recorded.
   */
  async beginAttempt(endpointId: string, webhookId: string, eventType: WebhookEventType, now = Date.now()): Promise<AttemptPlan> {
    const endpoint = this.endpoint(endpointId);
    if (!endpoint || endpoint.disabled_at) return { kind: "skip" };
    const delivery = this.delivery(endpointId, webhookId, eventType);
    if (delivery.status !== "pending") return { kind: "skip" };
    // A second copy of a queue message (a retried hand-off, the queue's at-least-once) neither doubles an attempt nor runs ahead of the schedule.
    if ((delivery.in_flight_until ?? 0) > now || (delivery.next_attempt_ms ?? 0) > now + SCHEDULE_SLACK_MS) return { kind: "skip" };
    this.sql.exec("UPDATE deliveries SET attempts = attempts + 1, in_flight_until = ? WHERE webhook_id = ?", now + IN_FLIGHT_MS, webhookId);
    return { kind: "attempt", url: endpoint.url, sealedSecret: endpoint.sealed_secret, attempt: delivery.attempts + 1 };
  }

  /** A delivery that cannot be made at all (its event is no longer kept, its secret cannot be read): failed now. */
  async giveUp(endpointId: string, webhookId: string, eventType: WebhookEventType, error: string): Promise<void> {
    if (!this.endpoint(endpointId)) return;
    this.delivery(endpointId, webhookId, eventType);
    await this.recordAttempt(endpointId, webhookId, { ok: false, statusCode: null, error, nextAttemptAt: null });
  }

  /** The delivery's row, created pending when it is new; the log keeps the newest ended deliveries and every pending one. */
  private delivery(endpointId: string, webhookId: string, eventType: WebhookEventType): DeliveryRow {
    const found = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE webhook_id = ?", webhookId).toArray()[0];
    if (found) return found;
    const created = this.sql
      .exec<DeliveryRow>(
        "INSERT INTO deliveries (id, webhook_id, endpoint_id, event_type, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?) RETURNING *",
        crypto.randomUUID(),
        webhookId,
        endpointId,
        eventType,
        iso(Date.now()),
      )
      .one();
    this.sql.exec(
      `DELETE FROM deliveries WHERE endpoint_id = ? AND status != 'pending'
         AND seq <= (SELECT seq FROM deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      endpointId,
      endpointId,
      DELIVERIES_KEPT,
    );
    return created;
  }

  /** After an attempt: the delivery's state, and the endpoint's failures in a row (disabled at FAILURES_TO_DISABLE). */
  async recordAttempt(endpointId: string, webhookId: string, outcome: AttemptOutcome): Promise<void> {
    const now = Date.now();
    const status = outcome.ok ? "delivered" : outcome.nextAttemptAt === null ? "failed" : "pending";
    this.sql.exec(
      `UPDATE deliveries SET status = ?, last_status_code = ?, last_error = ?, next_attempt_at = ?, next_attempt_ms = ?, delivered_at = ?, in_flight_until = NULL
         WHERE webhook_id = ? AND status = 'pending'`,
      status,
      outcome.statusCode,
      outcome.error,
      outcome.nextAttemptAt === null ? null : iso(outcome.nextAttemptAt),
      outcome.nextAttemptAt,
      outcome.ok ? iso(now) : null,
      webhookId,
    );
    if (status === "delivered") this.sql.exec("UPDATE endpoints SET failures_in_a_row = 0 WHERE id = ?", endpointId);
    if (status === "failed") {
      this.sql.exec(
        "UPDATE endpoints SET failures_in_a_row = failures_in_a_row + 1, disabled_at = CASE WHEN failures_in_a_row + 1 >= ? THEN ? ELSE disabled_at END WHERE id = ?",
        FAILURES_TO_DISABLE,
        iso(now),
        endpointId,
      );
      // A disabled endpoint receives nothing more: what still waits for it has failed.
      this.sql.exec(
        "UPDATE deliveries SET status = 'failed', last_error = 'the endpoint was disabled', next_attempt_at = NULL, next_attempt_ms = NULL WHERE endpoint_id = ? AND status = 'pending' AND EXISTS (SELECT 1 FROM endpoints WHERE id = ? AND disabled_at IS NOT NULL)",
        endpointId,
        endpointId,
      );
    }
  }

  private endpoint(id: string): EndpointRow | undefined {
    return this.sql.exec<EndpointRow>("SELECT * FROM endpoints WHERE id = ?", id).toArray()[0];
  }
}
