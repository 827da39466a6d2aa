import type { WebhookDelivery, WebhookEndpoint, WebhookEventType } from "./schemas";

// The tables of a project's ProjectWebhooks object, and their rows as the API shows them.
export const MIGRATIONS = [
  [
    `CREATE TABLE endpoints (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, url TEXT NOT NULL, events TEXT NOT NULL,
       description TEXT NOT NULL, sealed_secret TEXT NOT NULL, created_at TEXT NOT NULL, disabled_at TEXT, failures_in_a_row INTEGER NOT NULL DEFAULT 0)`,
    `CREATE TABLE deliveries (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, webhook_id TEXT NOT NULL UNIQUE, endpoint_id TEXT NOT NULL,
       event_type TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_status_code INTEGER, last_error TEXT,
       next_attempt_at TEXT, created_at TEXT NOT NULL, delivered_at TEXT, next_attempt_ms INTEGER, in_flight_until INTEGER)`,
    "CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, seq)",
  ],
  // The delivery's queue message, so it can be sent again; the attempt counts at which it was handed over and handed over again.
  ["ALTER TABLE deliveries ADD COLUMN task TEXT", "ALTER TABLE deliveries ADD COLUMN handed_at_attempt INTEGER", "ALTER TABLE deliveries ADD COLUMN rehanded_at_attempt INTEGER"],
  // The delivery's place in its endpoint's line while it waits its turn (endpoint-turns.ts).
  ["ALTER TABLE deliveries ADD COLUMN turn INTEGER", "CREATE INDEX deliveries_in_line ON deliveries (endpoint_id, turn) WHERE turn IS NOT NULL"],
  // The webhook switch (chats/webhook-switch.ts) once it has flipped: whether an endpoint is enabled, the flip's number, and whether the chat list has heard of it.
  ["CREATE TABLE switch (id INTEGER PRIMARY KEY CHECK (id = 1), project_id TEXT NOT NULL, enabled INTEGER NOT NULL, version INTEGER NOT NULL, told INTEGER NOT NULL)"],
];

export type EndpointRow = {
  id: string;
  url: string;
  events: string;
  description: string;
  sealed_secret: string;
  created_at: string;
  disabled_at: string | null;
  failures_in_a_row: number;
};
export type DeliveryRow = {
  task: string | null;
  turn: number | null;
  handed_at_attempt: number | null;
  rehanded_at_attempt: number | null;
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
export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events),
  description: r.description,
  createdAt: r.created_at,
  disabledAt: r.disabled_at,
});
export const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
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
