import type { WebhookTask } from "../../src/chats/webhook-task";
import type { Env } from "../../src/env";

/** What a test puts in place of an object's delivery queue: what it is sent, and whether it takes it. */
export type QueueStandIn = { sendBatch(messages: Iterable<MessageSendRequest<WebhookTask>>): Promise<void> };

// By Durable Object id: set by a test for the object it drives, read by the object (one isolate: the test's and the objects').
const queues = new Map<string, QueueStandIn>();
const webhookKeys = new Map<string, string>();
// The binding and method before whose call the object crashes (once), by the object's id.
type CrashPoint = { binding: "TOKEN_GATE" | "ACCOUNT_LEDGER"; method: string };
const crashes = new Map<string, CrashPoint>();

/** From now on the object with this id sends to `standIn` instead of the delivery queue. */
export const standInQueue = (id: DurableObjectId, standIn: QueueStandIn) => queues.set(id.toString(), standIn);

/** From now on the object with this id sends to its delivery queue again. */
export const endQueueStandIn = (id: DurableObjectId) => queues.delete(id.toString());

/** From now on the object with this id opens endpoint secrets with another WEBHOOK_KEY (what it sealed before no longer opens). */
export const standInWebhookKey = (id: DurableObjectId, key: string) => webhookKeys.set(id.toString(), key);

/** The object with this id crashes (its in-memory state lost, as on a restart) right before it next calls `method` on an object of `binding`. */
export const crashBeforeCall = (id: DurableObjectId, binding: CrashPoint["binding"], method: string) => crashes.set(id.toString(), { binding, method });

/** The bindings a test double of a Durable Object runs with: its own, unless a test stood in for its queue or its WEBHOOK_KEY, or asked it to crash before a call to another object. */
export function bindingsWithStandIns(ctx: DurableObjectState, env: Env): Env {
  const id = ctx.id.toString();
  const queue = {
    send: (body: WebhookTask, options?: QueueSendOptions) => (queues.has(id) ? queues.get(id)!.sendBatch([{ body, ...options }]) : env.WEBHOOK_DELIVERIES.send(body, options)),
    sendBatch: (messages: Iterable<MessageSendRequest<WebhookTask>>, options?: QueueSendBatchOptions) =>
      queues.has(id) ? queues.get(id)!.sendBatch(messages) : env.WEBHOOK_DELIVERIES.sendBatch(messages, options),
  };
  // A namespace as it is, but for the stubs it hands out: one whose method a test named crashes the object first.
  const crashing = <T extends { getByName(name: string): object }>(binding: CrashPoint["binding"], ns: T): T =>
    new Proxy(ns, {
      get(namespace, property) {
        if (property !== "getByName") {
          const value = Reflect.get(namespace, property);
          return typeof value === "function" ? value.bind(namespace) : value;
        }
        return (name: string) =>
          new Proxy(namespace.getByName(name), {
            get(stub, method) {
              const point = crashes.get(id);
              if (point?.binding === binding && method === point.method) {
                crashes.delete(id);
                ctx.abort("the crash a test asked for");
              }
              // An RPC stub's methods need no `this`: binding one would call a remote method named "bind".
              return Reflect.get(stub, method);
            },
          });
      },
    });
  const bindings = {
    ...env,
    WEBHOOK_DELIVERIES: queue as Queue<WebhookTask>,
    TOKEN_GATE: crashing("TOKEN_GATE", env.TOKEN_GATE),
    ACCOUNT_LEDGER: crashing("ACCOUNT_LEDGER", env.ACCOUNT_LEDGER),
  };
  Object.defineProperty(bindings, "WEBHOOK_KEY", { get: () => webhookKeys.get(id) ?? env.WEBHOOK_KEY, enumerable: true });
  return bindings;
}
