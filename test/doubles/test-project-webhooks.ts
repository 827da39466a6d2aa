import type { WebhookTask } from "../../src/chats/webhook-task";
import type { Env } from "../../src/env";
import { ProjectWebhooks } from "../../src/index";
import type { AttemptOutcome, AttemptPlan } from "../../src/webhooks/project-webhooks";
import type { OutboxEventType } from "../../src/chats/webhook-task";
import { webhookIdOf } from "../../src/webhooks/signature";
import { bindingsWithStandIns } from "./stand-ins";

/**
 * A project's webhooks object as the tests run it (bound as PROJECT_WEBHOOKS in the test Worker): the
 * service's class on bindings a test may stand in for (stand-ins.ts), and each step of a delivery callable
 * on its own, at a chosen time.
 */
export class TestProjectWebhooks extends ProjectWebhooks {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, bindingsWithStandIns(ctx, env));
  }

  /** One delivery as its queue message starts it, awaited when its turn comes at once: the delay before the next attempt, or undefined. */
  async attempt(task: WebhookTask, now = Date.now()): Promise<number | undefined> {
    const webhookId = await webhookIdOf(task.eventId, task.endpointId);
    return (await this.line(task, webhookId, now)).get(webhookId);
  }

  override async beginAttempt(endpointId: string, webhookId: string, eventType: OutboxEventType, now = Date.now(), task?: WebhookTask): Promise<AttemptPlan> {
    return super.beginAttempt(endpointId, webhookId, eventType, now, task);
  }

  override async recordAttempt(endpointId: string, webhookId: string, outcome: AttemptOutcome): Promise<void> {
    return super.recordAttempt(endpointId, webhookId, outcome);
  }
}
