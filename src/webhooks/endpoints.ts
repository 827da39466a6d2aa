import type { WebhookSwitch } from "../chats/webhook-switch";
import type { Env } from "../env";
import { log } from "../log";
import { iso } from "../time";
import type { WebhookEndpoint, WebhookEventType } from "./schemas";
import { type EndpointRow, toEndpoint } from "./webhook-tables";

export const WEBHOOKS_PER_PROJECT = 10;
// After this many deliveries in a row end failed, the endpoint is disabled.
export const FAILURES_TO_DISABLE = 50;
// When the project's chat list could not be told of a flip of the switch, the alarm tells it this much later.
const SWITCH_RETELL_MS = 5_000;

export type NewEndpoint = { url: string; events: WebhookEventType[]; description: string; sealedSecret: string };

/**
 * A project's webhook endpoints (in its ProjectWebhooks object's storage) and the switch its chats read: on while an
 * endpoint is enabled, numbered by its flips, each flip told to the project's chat list before the change answers.
 */
export class WebhookEndpoints {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    // When the chat list could not be told, the object's alarm tells it at this time.
    private readonly retellAt: (at: number) => Promise<void>,
  ) {}

  /**
   * Adds an endpoint. When it is the project's first enabled one, the project's chats that had been told
   * there were none are told otherwise before this returns, so every event after the answer is delivered.
   */
  async create(projectId: string, endpoint: NewEndpoint): Promise<{ kind: "created"; endpoint: WebhookEndpoint } | { kind: "limit" }> {
    const count = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM endpoints").one().n;
    if (count >= WEBHOOKS_PER_PROJECT) return { kind: "limit" };
    const before = this.switchState();
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
    await this.flipIfChanged(projectId, before);
    return { kind: "created", endpoint: toEndpoint(row) };
  }

  list(): WebhookEndpoint[] {
    return this.sql.exec<EndpointRow>("SELECT * FROM endpoints ORDER BY seq").toArray().map(toEndpoint);
  }

  /** Deletes an endpoint and its log; false when there was none. */
  async remove(projectId: string, endpointId: string): Promise<boolean> {
    const before = this.switchState();
    const removed = this.sql.exec("DELETE FROM endpoints WHERE id = ? RETURNING id", endpointId).toArray().length > 0;
    if (removed) this.sql.exec("DELETE FROM deliveries WHERE endpoint_id = ?", endpointId);
    await this.flipIfChanged(projectId, before);
    return removed;
  }

  endpoint(id: string): EndpointRow | undefined {
    return this.sql.exec<EndpointRow>("SELECT * FROM endpoints WHERE id = ?", id).toArray()[0];
  }

  /** The enabled endpoints, each with the event types it receives: one call serves a whole hand-off. */
  subscriptions(): { id: string; events: WebhookEventType[] }[] {
    return this.sql
      .exec<EndpointRow>("SELECT * FROM endpoints WHERE disabled_at IS NULL ORDER BY seq")
      .toArray()
      .map((r) => ({ id: r.id, events: JSON.parse(r.events) }));
  }

  /** The webhook switch: on while an endpoint is enabled, numbered by its flips. */
  switchState(): WebhookSwitch {
    const row = this.sql.exec<{ enabled: number; version: number }>("SELECT enabled, version FROM switch").toArray()[0];
    // Never flipped: on exactly when an endpoint is enabled (a project from before the switch may have some).
    return row ? { on: row.enabled === 1, version: row.version } : { on: this.hasEnabledEndpoint(), version: 0 };
  }

  private hasEnabledEndpoint(): boolean {
    return this.sql.exec("SELECT 1 FROM endpoints WHERE disabled_at IS NULL LIMIT 1").toArray().length > 0;
  }

  /** After the endpoints changed: a flip of the switch is numbered, kept, and told to the project's chat list before this returns. */
  async flipIfChanged(projectId: string | undefined, before: WebhookSwitch): Promise<void> {
    const on = this.hasEnabledEndpoint();
    projectId ??= this.sql.exec<{ project_id: string }>("SELECT project_id FROM switch").toArray()[0]?.project_id;
    // An object from before the switch that never learnt its project's id: its chats keep recording, as they did.
    if (on === before.on || projectId === undefined) return;
    this.sql.exec("INSERT OR REPLACE INTO switch (id, project_id, enabled, version, told) VALUES (1, ?, ?, ?, 0)", projectId, on ? 1 : 0, before.version + 1);
    await this.tellChatList();
  }

  /** Tells the project's chat list of the switch's last flip unless it has heard; when it cannot be reached, the alarm tells it soon. */
  async tellChatList(): Promise<void> {
    const row = this.sql.exec<{ project_id: string; enabled: number; version: number }>("SELECT project_id, enabled, version FROM switch WHERE told = 0").toArray()[0];
    if (!row) return;
    try {
      await this.env.PROJECT_CHATS.getByName(row.project_id).webhooksSwitched(row.project_id, { on: row.enabled === 1, version: row.version });
      this.sql.exec("UPDATE switch SET told = 1 WHERE version = ?", row.version);
    } catch (error) {
      log.error("webhook_switch_not_told", { projectId: row.project_id }, error);
      await this.retellAt(Date.now() + SWITCH_RETELL_MS);
    }
  }
}
