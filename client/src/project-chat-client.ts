import { type ChatEvent, type FollowOptions, followChat } from "./events.ts";
import type { components } from "./generated/api.ts";
import { type ClientOptions, Http } from "./http.ts";

type Schemas = components["schemas"];
export type Chat = Schemas["Chat"];
export type Message = Schemas["Message"];
export type Submission = Schemas["Submission"];
export type Queue = Schemas["Queue"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type CreatedWebhook = Schemas["CreatedWebhook"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type SendInput = { content: string; replyToMessageId?: string };
export type SendOptions = { idempotencyKey?: string; signal?: AbortSignal };

const enc = encodeURIComponent;
const chatsPath = (projectId: string) => `/v1/projects/${enc(projectId)}/chats`;
const chatPath = (projectId: string, chatId: string) => `${chatsPath(projectId)}/${enc(chatId)}`;
// How long sendAndWait waits for the reply unless told otherwise.
const DEFAULT_WAIT_MS = 10 * 60_000;

/**
 * The project-chat API with a personal API token. Sends are exactly-once: each intended message
 * gets one idempotency key (yours or a new UUID) that every retry reuses, so a retried send can
 * never become two messages. Errors are ProblemError.
 */
export class ProjectChatClient {
  readonly chats;
  readonly messages;
  readonly queue;
  readonly events;
  readonly webhooks;

  constructor(options: ClientOptions & { token: string }) {
    const http = new Http(options, options.token);
    const call = async <T>(method: string, path: string, rest: Omit<Parameters<Http["request"]>[2], "repeatable"> & { repeatable?: boolean } = {}) =>
      (await http.request<T>(method, path, { repeatable: method !== "POST", ...rest })).body;
    const follow = (projectId: string, chatId: string, options?: FollowOptions): AsyncGenerator<ChatEvent> => followChat(http, `${chatPath(projectId, chatId)}/events`, options);
    const submit =
      (what: "messages" | "steer") =>
      (projectId: string, chatId: string, input: SendInput, options: SendOptions = {}) =>
        call<Submission>("POST", `${chatPath(projectId, chatId)}/${what}`, {
          body: input,
          headers: { "idempotency-key": options.idempotencyKey ?? crypto.randomUUID() },
          repeatable: true,
          signal: options.signal,
        });

    this.chats = {
      list: async (projectId: string, options: { archived?: boolean } = {}) =>
        (await call<{ items: Chat[] }>("GET", chatsPath(projectId), { query: { archived: options.archived ? "true" : undefined } })).items,
      /** Idempotent: one key per intended chat (a new UUID unless given), reused by every retry. */
      create: (projectId: string, input: { title: string }, options: { idempotencyKey?: string } = {}) =>
        call<Chat>("POST", chatsPath(projectId), { body: input, headers: { "idempotency-key": options.idempotencyKey ?? crypto.randomUUID() }, repeatable: true }),
      get: (projectId: string, chatId: string) => call<Chat>("GET", chatPath(projectId, chatId)),
      rename: (projectId: string, chatId: string, input: { title: string }) => call<Chat>("PATCH", chatPath(projectId, chatId), { body: input, repeatable: true }),
      archive: (projectId: string, chatId: string) => call<Chat>("POST", `${chatPath(projectId, chatId)}/archive`, { repeatable: true }),
      restore: (projectId: string, chatId: string) => call<Chat>("POST", `${chatPath(projectId, chatId)}/restore`, { repeatable: true }),
    };

    this.messages = {
      send: submit("messages"),
      steer: submit("steer"),
      /** Stops a working reply (a finished one is answered as it is, so repeating is safe). */
      stop: (projectId: string, chatId: string, messageId: string) => call<Message>("POST", `${chatPath(projectId, chatId)}/messages/${enc(messageId)}/stop`, { repeatable: true }),
      /** Every message, newest first, page after page. */
      list: (projectId: string, chatId: string, options: { limit?: number; signal?: AbortSignal } = {}): AsyncIterable<Message> => ({
        async *[Symbol.asyncIterator]() {
          let cursor: string | undefined;
          do {
            const page = await call<Schemas["MessagePage"]>("GET", `${chatPath(projectId, chatId)}/messages`, { query: { limit: options.limit, cursor }, signal: options.signal });
            yield* page.items;
            cursor = page.nextCursor ?? undefined;
          } while (cursor);
        },
      }),
      /** Sends a message and waits for its task's reply to end (success, failed or interrupted_by_user): that reply. */
      sendAndWait: async (projectId: string, chatId: string, input: SendInput, options: SendOptions & { timeoutMs?: number } = {}): Promise<Message> => {
        const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMs ?? DEFAULT_WAIT_MS), ...(options.signal ? [options.signal] : [])]);
        const watching = new AbortController();
        // Following first, from the stream's own snapshot, so the end cannot pass before we look.
        const events = follow(projectId, chatId, { signal: AbortSignal.any([signal, watching.signal]) });
        try {
          const first = await events.next();
          if (first.done) throw signal.reason ?? new Error("the chat's event stream ended");
          const sent = await submit("messages")(projectId, chatId, input, { ...options, signal });
          for await (const event of events) {
            const m = event.type === "message" ? event.data : undefined;
            if (m?.role === "owner" && m.submissionId === sent.submissionId && m.status !== "working") return m;
          }
          throw signal.reason ?? new Error("the chat's event stream ended");
        } finally {
          watching.abort();
          await events.return(undefined);
        }
      },
    };

    this.queue = {
      get: (projectId: string, chatId: string) => call<Queue>("GET", `${chatPath(projectId, chatId)}/queue`),
      /** Removes a submission that has not started; 204 again when repeated. */
      cancel: async (projectId: string, chatId: string, submissionId: string) => void (await call("DELETE", `${chatPath(projectId, chatId)}/queue/${enc(submissionId)}`)),
    };

    this.events = { follow };

    this.webhooks = {
      /** Not repeated after a network error (it would make a second endpoint): list and check instead. */
      create: (projectId: string, input: { url: string; events?: WebhookEndpoint["events"]; description?: string }) =>
        call<CreatedWebhook>("POST", `/v1/projects/${enc(projectId)}/webhooks`, { body: input, repeatable: false }),
      list: async (projectId: string) => (await call<{ items: WebhookEndpoint[] }>("GET", `/v1/projects/${enc(projectId)}/webhooks`)).items,
      delete: async (projectId: string, endpointId: string) => void (await call("DELETE", `/v1/projects/${enc(projectId)}/webhooks/${enc(endpointId)}`)),
      deliveries: async (projectId: string, endpointId: string) =>
        (await call<{ items: WebhookDelivery[] }>("GET", `/v1/projects/${enc(projectId)}/webhooks/${enc(endpointId)}/deliveries`)).items,
    };
  }
}
