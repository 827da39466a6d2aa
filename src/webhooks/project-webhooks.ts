import { DurableObject } from "cloudflare:workers";
import { migrateSchema } from "../db/object-schema";
import type { Env } from "../env";
import { type OpenedDelivery, openDelivery, postToReceiver, RETRY_DELAYS_S } from "./delivery";
import { openPush, type PushBody } from "./push-delivery";
import { EndpointTurns, type Turn } from "./endpoint-turns";
import { FAILURES_TO_DISABLE, type NewEndpoint, WebhookEndpoints } from "./endpoints";
import type { WebhookDelivery, WebhookEndpoint, WebhookEventType } from "./schemas";
import { type DeliveryRow, type EndpointRow, MIGRATIONS, toDelivery } from "./webhook-tables";
import { log } from "../log";
import { DAY_MS, iso } from "../time";
import { webhookIdOf } from "./signature";
import type { OutboxEventType, WebhookTask } from "../chats/webhook-task";
import type { WebhookSwitch } from "../chats/webhook-switch";

// The deliveries listed (and, once ended, kept) per endpoint.
const DELIVERIES_KEPT = 100;
// An attempt holds its delivery this long (a 15 s request and the calls around it), so another copy of its message waits.
export const IN_FLIGHT_MS = 60_000;
// A retry's message may come this much before its time (queue delays are not exact).
const SCHEDULE_SLACK_MS = 2_000;
// A pending delivery whose attempt has not begun this long after it was handed over (or whose attempt never reported) lost its message.
export const OVERDUE_MS = 60_000;
// When the queue cannot take the retries the alarm hands over, the alarm looks again this much later.
const HAND_OVER_RETRY_MS = 30_000;
// After a restart (whose attempts ended with it), the alarm starts the deliveries still waiting their turn this soon.
export const TURN_CHECK_MS = 10_000;
// A delivery whose chat's object could not be asked (no attempt made) tries again this much later, in its place, for up to a day.
export const CHAT_RETRY_MS = 30_000;
const CHAT_RETRIES_END_MS = DAY_MS;
// Events a caller causes at no cost (a send refused for credits): at most this many deliveries per endpoint and minute.
export const SUBMISSION_FAILED_PER_MINUTE = 10;

export type AttemptPlan = { kind: "attempt"; url: string; sealedSecret: string; attempt: number } | { kind: "skip" };
type Claimed = { url: string; attempt: number; webhookId: string; opened: OpenedDelivery };
// Ended push deliveries are kept this long: a config's line lives as long as its task, and nothing lists them.
const PUSH_DELIVERIES_KEPT_MS = 2 * DAY_MS;
export type AttemptOutcome = { ok: boolean; statusCode: number | null; error: string | null; nextAttemptAt: number | null };

// A retry waiting for its time (not in its endpoint's line): the alarm hands it to the queue then (a durable timer, where a queue message's delay is not one under wrangler dev).
const WAITING =
  "status = 'pending' AND turn IS NULL AND task IS NOT NULL AND next_attempt_ms IS NOT NULL AND in_flight_until IS NULL AND (handed_at_attempt IS NULL OR handed_at_attempt < attempts)";
// When a pending delivery counts as lost: OVERDUE_MS after its next attempt's time or its claim's end, whichever is later.
const OVERDUE_AT = `MAX(COALESCE(in_flight_until, 0), COALESCE(next_attempt_ms, 0)) + ${OVERDUE_MS}`;
// Pending, not waiting its turn, with the event's address kept, and not handed over yet at this attempt count.
const STRANDED = "status = 'pending' AND turn IS NULL AND task IS NOT NULL AND (rehanded_at_attempt IS NULL OR rehanded_at_attempt < attempts)";
/** Pending, not claimed by an attempt of another copy of its message, and not ahead of its schedule. */
const attemptable = (d: DeliveryRow, now: number) => d.status === "pending" && (d.in_flight_until ?? 0) <= now && (d.next_attempt_ms ?? 0) <= now + SCHEDULE_SLACK_MS;

/**
 * One object per project (named by its id): its webhook endpoints, their sealed secrets, the
 * delivery log and the count of failed deliveries in a row. Chats ask it who subscribes to an
 * event; the queue consumer hands it each delivery, which waits its turn in its endpoint's line and
 * is attempted here (the endpoint still exists and is enabled, the delivery has not ended). An A2A
 * push goes the same way, its config (kept by the task's chat) in the endpoint's place.
 */
export class ProjectWebhooks extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly turns: EndpointTurns;
  private readonly endpoints: WebhookEndpoints;
  // How a push's body is shaped: the entry's class gives the A2A channel's (webhooks/ never imports it).
  protected readonly shapePush: PushBody = () => {
    throw new Error("no channel shapes push bodies here");
  };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrateSchema(this.sql, MIGRATIONS);
    this.turns = new EndpointTurns(this.sql);
    this.endpoints = new WebhookEndpoints(this.sql, env, (at) => this.sweepAt(at));
  }

  /** Adds an endpoint (endpoints.ts); a flip of the switch is told to the project's chats before this returns. */
  async create(projectId: string, endpoint: NewEndpoint): Promise<{ kind: "created"; endpoint: WebhookEndpoint } | { kind: "limit" }> {
    return this.endpoints.create(projectId, endpoint);
  }

  async list(): Promise<WebhookEndpoint[]> {
    return this.endpoints.list();
  }

  /** Deletes an endpoint and its log; false when there was none. An attempt that has not begun never starts. */
  async remove(projectId: string, endpointId: string): Promise<boolean> {
    return this.endpoints.remove(projectId, endpointId);
  }

  /** The webhook switch: on while an endpoint is enabled, numbered by its flips. */
  async switchState(): Promise<WebhookSwitch> {
    return this.endpoints.switchState();
  }

  /** The newest deliveries of an endpoint, newest first; null when there is no such endpoint. */
  async deliveries(endpointId: string): Promise<WebhookDelivery[] | null> {
    if (!this.endpoint(endpointId)) return null;
    return this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?", endpointId, DELIVERIES_KEPT).toArray().map(toDelivery);
  }

  /** The enabled endpoints, each with the event types it receives: one call serves a whole hand-off. */
  async subscriptions(): Promise<{ id: string; events: WebhookEventType[] }[]> {
    return this.endpoints.subscriptions();
  }

  /**
   * The consumer's call for each queue message: the delivery joins its endpoint's line and the
   * attempts whose turn has come are made here, not in the consumer, so the queue's batch never
   * waits on a receiver; a failed attempt's retry is handed to the queue by the alarm at its time.
   * Returns once the delivery is in line or its turn has come (or it needed no attempt).
   */
  async start(task: WebhookTask): Promise<void> {
    await this.line(task, await webhookIdOf(task.eventId, task.endpointId), Date.now());
  }

  /**
   * Puts the delivery in its endpoint's line when it may be attempted now, and starts the attempts
   * whose turn has come; the alarm is set before this returns, so a restart loses no delivery in line.
   */
  protected async line(task: WebhookTask, webhookId: string, now: number): Promise<Map<string, Promise<number | undefined>>> {
    if (this.mayJoin(task, webhookId, now)) this.turns.join(task.endpointId, webhookId);
    const started = this.startTurns(task.endpointId, now);
    if (this.turns.hasWaiting(task.endpointId)) await this.sweepAt(now + TURN_CHECK_MS);
    if (started.size > 0) await this.sweepAt(now + IN_FLIGHT_MS + OVERDUE_MS);
    return started;
  }

  /**
   * Whether a delivery may join the line: its endpoint exists and is enabled, it is within the free
   * events' budget, it has not ended, and no other copy of its message is attempting it or ahead of
   * its schedule (so duplicated messages never double an attempt or compress the schedule). Creates
   * its row in the same synchronous stretch as the budget is checked, so copies at once count each other.
   */
  private mayJoin(task: WebhookTask, webhookId: string, now: number): boolean {
    // A push's config is the chat's: whether it still exists is asked right before each attempt.
    const endpoint = task.push ? undefined : this.endpoint(task.endpointId);
    if (!task.push && (!endpoint || endpoint.disabled_at)) return false;
    if (this.overFreeEventBudget(task, webhookId, now)) return false;
    return attemptable(this.delivery(task.endpointId, webhookId, task.type, task), now);
  }

  /** Starts the attempts whose turn has come at an endpoint; each one ending starts the next. The runs started, by webhook-id. */
  private startTurns(endpointId: string, now: number): Map<string, Promise<number | undefined>> {
    const started = new Map<string, Promise<number | undefined>>();
    for (const turn of this.turns.take(endpointId, now, now + SCHEDULE_SLACK_MS)) {
      const run = this.run(turn, now).finally(() => {
        this.turns.release(endpointId);
        this.startTurns(endpointId, Date.now());
      });
      this.ctx.waitUntil(run);
      started.set(turn.webhook_id, run);
    }
    return started;
  }

  /** One attempt whose turn came; one cut off after it was counted is handed over again once overdue, as after a restart. */
  private async run(turn: Turn, now: number): Promise<number | undefined> {
    const task = JSON.parse(turn.task) as WebhookTask;
    const fields = { projectId: task.projectId, endpointId: task.endpointId };
    let claimed: Claimed | undefined;
    try {
      claimed = await this.claim(task, turn.webhook_id, now);
    } catch (error) {
      log.warn("webhook_attempt_deferred", fields, error);
      await this.deferTurn(task, turn, now);
      return undefined;
    }
    try {
      return claimed ? await this.complete(task, claimed, now) : undefined;
    } catch (error) {
      log.warn("webhook_attempt_failed", fields, error);
      return undefined;
    }
  }

  /**
   * The chat's object could not be asked for the payload (it is restarting, overloaded, unreachable):
   * no attempt was made, so the delivery keeps its place and goes again CHAT_RETRY_MS later, and
   * fails once it has waited a day.
   */
  private async deferTurn(task: WebhookTask, turn: Turn, now: number): Promise<void> {
    const delivery = this.sql.exec<{ created_at: string }>("SELECT created_at FROM deliveries WHERE webhook_id = ?", turn.webhook_id).toArray()[0];
    if (!delivery) return;
    if (now - Date.parse(delivery.created_at) >= CHAT_RETRIES_END_MS) {
      await this.giveUp(task.endpointId, turn.webhook_id, task.type, "the chat's object could not be asked for a day");
      return;
    }
    this.turns.putBack(turn, now + CHAT_RETRY_MS);
    await this.sweepAt(now + CHAT_RETRY_MS);
  }

  /**
   * Everything before the request: the payload is read and the secret opened first (a delivery that
   * can never be made fails at once); the attempt is claimed and counted last, so a delete that has
   * returned stops it and a failure on the way costs no attempt.
   */
  private async claim(task: WebhookTask, webhookId: string, now: number): Promise<Claimed | undefined> {
    let opened: (OpenedDelivery & { url?: string }) | { why: string } | null;
    if (task.push) opened = await openPush(task, this.env, this.shapePush);
    else {
      const endpoint = this.endpoint(task.endpointId);
      if (!endpoint || endpoint.disabled_at) return undefined;
      opened = await openDelivery(task, this.env, endpoint.sealed_secret);
    }
    if (opened === null || "why" in opened) {
      await this.giveUp(task.endpointId, webhookId, task.type, opened?.why ?? "the push config was deleted, or its event is no longer kept", task);
      return undefined;
    }
    const plan = await this.beginAttempt(task.endpointId, webhookId, task.type, now, task);
    return plan.kind === "attempt" ? { url: opened.url ?? plan.url, attempt: plan.attempt, webhookId, opened } : undefined;
  }

  /** The request and its outcome recorded: the delay before the next attempt, undefined when the delivery has ended. */
  private async complete(task: WebhookTask, claimed: Claimed, now: number): Promise<number | undefined> {
    const { statusCode, error } = await postToReceiver(claimed.url, claimed.webhookId, claimed.opened, now);
    const delay = error ? RETRY_DELAYS_S[claimed.attempt - 1] : undefined;
    await this.recordAttempt(task.endpointId, claimed.webhookId, { ok: !error, statusCode, error, nextAttemptAt: delay === undefined ? null : now + delay * 1000 });
    return delay;
  }

  /**
   * A new submission.failed delivery past the endpoint's budget for the minute: not made (an owner
   * without credits gets one such event per refused send, at no cost to the sender).
   */
  private overFreeEventBudget(task: WebhookTask, webhookId: string, now: number): boolean {
    if (task.type !== "submission.failed" || this.sql.exec("SELECT 1 FROM deliveries WHERE webhook_id = ?", webhookId).toArray().length > 0) return false;
    const recent = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM deliveries WHERE endpoint_id = ? AND event_type = 'submission.failed' AND created_at > ?", task.endpointId, iso(now - 60_000))
      .one().n;
    return recent >= SUBMISSION_FAILED_PER_MINUTE;
  }

  /**
   * Right before an attempt: whether it may start (the endpoint still exists and is enabled, the
   * delivery has not ended, no other copy of its message is attempting it or ahead of its schedule);
   * counts it and claims it until the outcome is recorded.
   */
  protected async beginAttempt(endpointId: string, webhookId: string, eventType: OutboxEventType, now = Date.now(), task?: WebhookTask): Promise<AttemptPlan> {
    const endpoint = task?.push ? undefined : this.endpoint(endpointId);
    if (!task?.push && (!endpoint || endpoint.disabled_at)) return { kind: "skip" };
    const delivery = this.delivery(endpointId, webhookId, eventType, task);
    if (!attemptable(delivery, now)) return { kind: "skip" };
    this.sql.exec("UPDATE deliveries SET attempts = attempts + 1, in_flight_until = ? WHERE webhook_id = ?", now + IN_FLIGHT_MS, webhookId);
    // An attempt that never reports (the object restarted under it) is handed over again once overdue.
    await this.sweepAt(now + IN_FLIGHT_MS + OVERDUE_MS);
    // A push's URL and secrets come from its config (claim).
    return { kind: "attempt", url: endpoint?.url ?? "", sealedSecret: endpoint?.sealed_secret ?? "", attempt: delivery.attempts + 1 };
  }

  /** A delivery that cannot be made at all (its event is no longer kept, its secret cannot be read): failed now. */
  private async giveUp(endpointId: string, webhookId: string, eventType: OutboxEventType, error: string, task?: WebhookTask): Promise<void> {
    if (!task?.push && !this.endpoint(endpointId)) return;
    this.delivery(endpointId, webhookId, eventType, task);
    await this.recordAttempt(endpointId, webhookId, { ok: false, statusCode: null, error, nextAttemptAt: null });
  }

  /** The delivery's row, created pending when it is new; the log keeps the newest ended deliveries and every pending one. */
  private delivery(endpointId: string, webhookId: string, eventType: OutboxEventType, task?: WebhookTask): DeliveryRow {
    const found = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE webhook_id = ?", webhookId).toArray()[0];
    // A delivery logged before its message was kept keeps it now, so the alarm can hand its retries over.
    if (found && !found.task && task) this.sql.exec("UPDATE deliveries SET task = ? WHERE webhook_id = ?", JSON.stringify(task), webhookId);
    if (found) return found;
    const created = this.sql
      .exec<DeliveryRow>(
        "INSERT INTO deliveries (id, webhook_id, endpoint_id, event_type, status, created_at, task) VALUES (?, ?, ?, ?, 'pending', ?, ?) RETURNING *",
        crypto.randomUUID(),
        webhookId,
        endpointId,
        eventType,
        iso(Date.now()),
        task ? JSON.stringify(task) : null,
      )
      .one();
    this.sql.exec(
      `DELETE FROM deliveries WHERE endpoint_id = ? AND status != 'pending'
         AND seq <= (SELECT seq FROM deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      endpointId,
      endpointId,
      DELIVERIES_KEPT,
    );
    if (task?.push) {
      this.sql.exec("DELETE FROM deliveries WHERE endpoint_id LIKE 'push:%' AND status != 'pending' AND created_at < ?", iso(Date.now() - PUSH_DELIVERIES_KEPT_MS));
    }
    return created;
  }

  /**
   * The delivery timer: the deliveries waiting their turn go on (after a restart); a retry whose time has come is handed to the queue; a pending delivery whose
   * message was lost (the queue dropped it, an attempt was cut off by a restart) is handed over again
   * once OVERDUE_MS past its time, once per attempt count, so a step of the schedule is never
   * handed over a third time.
   */
  override async alarm(): Promise<void> {
    await this.endpoints.tellChatList();
    const now = Date.now();
    // After a restart no attempt of the old object runs: each endpoint's line goes on from where it was.
    for (const endpointId of this.turns.waitingEndpoints()) this.startTurns(endpointId, now);
    const due = this.sql.exec<DeliveryRow>(`SELECT * FROM deliveries WHERE ${WAITING} AND next_attempt_ms <= ?`, now).toArray();
    const handed = new Set(due.map((d) => d.webhook_id));
    const lost = this.sql
      .exec<DeliveryRow>(`SELECT * FROM deliveries WHERE ${STRANDED} AND ${OVERDUE_AT} <= ?`, now)
      .toArray()
      .filter((d) => !handed.has(d.webhook_id));
    const tasks = [...due, ...lost].map((d) => ({ body: JSON.parse(d.task!) as WebhookTask }));
    try {
      for (let i = 0; i < tasks.length; i += 100) await this.env.WEBHOOK_DELIVERIES.sendBatch(tasks.slice(i, i + 100));
    } catch (error) {
      // The runtime gives up on an alarm that keeps throwing: this one looks again itself, nothing marked handed over.
      log.warn("webhook_retry_handoff_failed", {}, error);
      await this.ctx.storage.setAlarm(now + HAND_OVER_RETRY_MS);
      return;
    }
    // The step as read before the send: an attempt recorded meanwhile is a new step, handed over at its own time.
    for (const d of due) this.sql.exec("UPDATE deliveries SET handed_at_attempt = ? WHERE webhook_id = ?", d.attempts, d.webhook_id);
    for (const d of lost) this.sql.exec("UPDATE deliveries SET rehanded_at_attempt = ? WHERE webhook_id = ?", d.attempts, d.webhook_id);
    const next = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM (SELECT MIN(next_attempt_ms) AS at FROM deliveries WHERE ${WAITING} UNION ALL SELECT MIN(${OVERDUE_AT}) FROM deliveries WHERE ${STRANDED})`,
      )
      .one().at;
    const lineCheck = this.turns.hasWaiting() ? now + TURN_CHECK_MS : null;
    const at = next === null || lineCheck === null ? (next ?? lineCheck) : Math.min(next, lineCheck);
    if (at !== null) await this.ctx.storage.setAlarm(Math.max(at, now + 1_000));
  }

  /** Sets the sweep's alarm for `at` unless an earlier one is set. */
  private async sweepAt(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /** After an attempt: the delivery's state, and the endpoint's failures in a row (disabled at FAILURES_TO_DISABLE). */
  protected async recordAttempt(endpointId: string, webhookId: string, outcome: AttemptOutcome): Promise<void> {
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
    if (status === "pending" && outcome.nextAttemptAt !== null) await this.sweepAt(outcome.nextAttemptAt);
    if (status === "failed") {
      const before = this.endpoints.switchState();
      this.sql.exec(
        "UPDATE endpoints SET failures_in_a_row = failures_in_a_row + 1, disabled_at = CASE WHEN failures_in_a_row + 1 >= ? THEN ? ELSE disabled_at END WHERE id = ?",
        FAILURES_TO_DISABLE,
        iso(now),
        endpointId,
      );
      // A disabled endpoint receives nothing more: what still waits for it has failed.
      this.sql.exec(
        "UPDATE deliveries SET status = 'failed', last_error = 'the endpoint was disabled', next_attempt_at = NULL, next_attempt_ms = NULL, turn = NULL WHERE endpoint_id = ? AND status = 'pending' AND EXISTS (SELECT 1 FROM endpoints WHERE id = ? AND disabled_at IS NOT NULL)",
        endpointId,
        endpointId,
      );
      await this.endpoints.flipIfChanged(undefined, before);
    }
  }

  private endpoint(id: string): EndpointRow | undefined {
    return this.endpoints.endpoint(id);
  }
}
