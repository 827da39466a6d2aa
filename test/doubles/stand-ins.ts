import type { WebhookTask } from "../../src/chats/webhook-task";
import type { Env } from "../../src/env";

/** What a test puts in place of an object's delivery queue: what it is sent, and whether it takes it. */
export type QueueStandIn = { sendBatch(messages: Iterable<MessageSendRequest<WebhookTask>>): Promise<void> };

// By Durable Object id: set by a test for the object it drives, read by the object (one isolate: the test's and the objects').
const queues = new Map<string, QueueStandIn>();
const webhookKeys = new Map<string, string>();
// The TokenGate method before whose call the object crashes (once), by the object's id.
const gateCrashes = new Map<string, string>();

/** From now on the object with this id sends to `standIn` instead of the delivery queue. */
export const standInQueue = (id: DurableObjectId, standIn: QueueStandIn) => queues.set(id.toString(), standIn);

/** From now on the object with this id sends to its delivery queue again. */
export const endQueueStandIn = (id: DurableObjectId) => queues.delete(id.toString());

/** From now on the object with this id opens endpoint secrets with another WEBHOOK_KEY (what it sealed before no longer opens). */
export const standInWebhookKey = (id: DurableObjectId, key: string) => webhookKeys.set(id.toString(), key);

/** The object with this id crashes (its in-memory state lost, as on a restart) right before it next calls `method` on a TokenGate. */
export const crashBeforeGateCall = (id: DurableObjectId, method: string) => gateCrashes.set(id.toString(), method);

/** The bindings a test double of a Durable Object runs with: its own, unless a test stood in for its queue or its WEBHOOK_KEY, or asked it to crash before a TokenGate call. */
export function bindingsWithStandIns(ctx: DurableObjectState, env: Env): Env {
  const id = ctx.id.toString();
  const queue = {
    send: (body: WebhookTask, options?: QueueSendOptions) => (queues.has(id) ? queues.get(id)!.sendBatch([{ body, ...options }]) : env.WEBHOOK_DELIVERIES.send(body, options)),
    sendBatch: (messages: Iterable<MessageSendRequest<WebhookTask>>, options?: QueueSendBatchOptions) =>
      queues.has(id) ? queues.get(id)!.sendBatch(messages) : env.WEBHOOK_DELIVERIES.sendBatch(messages, options),
  };
  // The namespace as it is, but for the stubs it hands out: one whose method a test named crashes the object first.
  const gates = new Proxy(env.TOKEN_GATE, {
    get(namespace, property) {
      if (property !== "getByName") {
        const value = Reflect.get(namespace, property);
        return typeof value === "function" ? value.bind(namespace) : value;
      }
      return (name: string) =>
        new Proxy(namespace.getByName(name), {
          get(stub, method) {
            if (method === gateCrashes.get(id)) {
              gateCrashes.delete(id);
              ctx.abort("the crash a test asked for");
            }
            // An RPC stub's methods need no `this`: binding one would call a remote method named "bind".
            return Reflect.get(stub, method);
          },
        });
    },
  });
  const bindings = { ...env, WEBHOOK_DELIVERIES: queue as Queue<WebhookTask>, TOKEN_GATE: gates };
  Object.defineProperty(bindings, "WEBHOOK_KEY", { get: () => webhookKeys.get(id) ?? env.WEBHOOK_KEY, enumerable: true });
  return bindings;
}
