import type { Env } from "../../env";
import { log } from "../../log";
import type { RoomStorage } from "./room-storage";
import type { AlarmSchedule, DeferredJob } from "./schedule";
import type { OutboxRow, WebhookOutbox } from "./webhook-outbox";
import { PUSH_EVENT, type WebhookTask } from "../webhook-task";
import type { WebhookEventType } from "../event-registry";

// A failed hand-off is tried again this much later (by the alarm), not at every change meanwhile.
const HAND_OFF_RETRY_MS = 5_000;
// Events read from the outbox at a time; the delivery queue takes at most this many messages per batch.
const EVENTS_PER_READ = 20;
const QUEUE_BATCH_MAX = 100;
// A hand-off still under way after this long is taken as lost (its calls hang, or the object restarted during it).
const HAND_OFF_LEASE_MS = 30_000;

/**
 * Hands the outbox's events to the delivery queue, one message per subscribed endpoint, and marks
 * them; if the queue or the project's webhooks cannot be reached, it pauses and the alarm tries again.
 * A crash between the send and the mark sends them again: the same webhook-id, deduplicated by receivers.
 */
export class WebhookHandOff implements DeferredJob {
  // The hand-off under way, so two never run at once.
  private running: Promise<void> | undefined;
  // After a failed hand-off, changes do not start another before this time (the alarm does).
  private pausedUntil = 0;
  // When the hand-off under way counts as lost (the alarm then starts another; the outbox's marks keep it to one delivery per event).
  private leaseEnds = 0;

  constructor(
    private readonly env: Env,
    private readonly ctx: DurableObjectState,
    private readonly store: RoomStorage,
    private readonly outbox: WebhookOutbox,
    // A push event's deliveries: one per config of its task.
    private readonly pushTargets: (event: OutboxRow, projectId: string, chatId: string) => WebhookTask[],
    // Told when a hand-off has settled: what is due next may have changed.
    private readonly schedule: AlarmSchedule,
  ) {}

  /** After a change: starts a hand-off in the background when events wait and no failure pauses it. */
  kick(now: number): void {
    if (now >= this.pausedUntil && this.outbox.hasWaiting()) this.start();
  }

  /**
   * When the alarm must start one: events wait. One under way counts as due when its lease ends, so
   * an object that restarts mid hand-off, or one whose calls hang, still has an alarm to try again.
   */
  dueAt(): number | undefined {
    if (!this.outbox.hasWaiting()) return undefined;
    return this.running === undefined ? this.pausedUntil : this.leaseEnds;
  }

  /** From the alarm: starts a hand-off in the background, so the queue or the project's webhooks being slow never hold up the chat. */
  async run(): Promise<void> {
    this.start();
  }

  /** Starts a hand-off, unless one is under way within its lease. */
  private start(): void {
    const now = Date.now();
    if (this.running !== undefined && now < this.leaseEnds) return;
    this.leaseEnds = now + HAND_OFF_LEASE_MS;
    const running = this.handOffWaiting().finally(() => {
      // A lost one settling late must not clear the one that replaced it.
      if (this.running === running) this.running = undefined;
      this.schedule.reschedule(Date.now());
    });
    this.running = running;
    this.ctx.waitUntil(running);
  }

  private async handOffWaiting(): Promise<void> {
    try {
      const { id: chatId, project_id: projectId } = this.store.chat()!;
      const project = this.env.PROJECT_WEBHOOKS.getByName(projectId);
      for (let events = this.outbox.waitingEvents(EVENTS_PER_READ); events.length > 0; events = this.outbox.waitingEvents(EVENTS_PER_READ)) {
        // Pushes alone need no word from the project's webhooks.
        const subscriptions = events.some((e) => e.type !== PUSH_EVENT) ? await project.subscriptions() : [];
        const tasks: WebhookTask[] = events.flatMap((e) =>
          e.type === PUSH_EVENT
            ? this.pushTargets(e, projectId, chatId)
            : subscriptions
                .filter((endpoint) => endpoint.events.includes(e.type as WebhookEventType))
                .map((endpoint) => ({ projectId, chatId, eventId: e.id, endpointId: endpoint.id, type: e.type })),
        );
        for (let i = 0; i < tasks.length; i += QUEUE_BATCH_MAX) await this.env.WEBHOOK_DELIVERIES.sendBatch(tasks.slice(i, i + QUEUE_BATCH_MAX).map((body) => ({ body })));
        this.outbox.handedOff(
          events.map((e) => e.id),
          Date.now(),
        );
      }
    } catch (error) {
      log.warn("webhook_handoff_failed", { chatId: this.store.chat()?.id }, error);
      // Changes meanwhile (a streaming reply's every batch) do not try again at once: the alarm does.
      this.pausedUntil = Date.now() + HAND_OFF_RETRY_MS;
    }
  }
}
