import { ApiPromise, everyItem, itemsOf, type WithEventId, withEventId } from "./answer.ts";
import { TimeoutError } from "./errors.ts";
import { type ChatEvent, type FollowOptions, followChat } from "./events.ts";
import type { components } from "./generated/api.ts";
import { type CallOptions, type ClientOptions, callOptions, checkTimeout, Http } from "./http.ts";

type Schemas = components["schemas"];
export type Chat = Schemas["Chat"];
export type Message = Schemas["Message"];
export type MessagePage = Schemas["MessagePage"];
export type Submission = Schemas["Submission"];
export type Queue = Schemas["Queue"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type CreatedWebhook = Schemas["CreatedWebhook"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type ProjectSummary = Schemas["ProjectSummary"];
export type ProjectCredits = Schemas["ProjectCredits"];
export type UsageDay = Schemas["UsageDay"];
export type Question = Schemas["Question"];
/** One of the answer bodies; which fit depends on the question's kind. */
export type AnswerInput = Schemas["Answer"];
export type AnswerSubmission = Schemas["AnswerSubmission"];
export type Chain = Schemas["Chain"];
export type Forked = Schemas["Forked"];
export type ForkInput = Schemas["ForkChat"];
export type UsageOptions = CallOptions & { from?: string; to?: string };
export type SendInput = { content: string; replyToMessageId?: string };
export type SendOptions = CallOptions & { idempotencyKey?: string };
/** What a send does when the chat is busy: queue (the server's default), steer, interrupt, or reject (a 409 chat_busy ProblemError). */
export type IfBusy = "queue" | "steer" | "interrupt" | "reject";
export type MessageSendOptions = SendOptions & { ifBusy?: IfBusy };

const enc = encodeURIComponent;
const projectPath = (projectId: string) => `/v1/projects/${enc(projectId)}`;
const chatsPath = (projectId: string) => `${projectPath(projectId)}/chats`;
const chatPath = (projectId: string, chatId: string) => `${chatsPath(projectId)}/${enc(chatId)}`;
const webhooksPath = (projectId: string) => `${projectPath(projectId)}/webhooks`;
// How long sendAndWait waits for the reply unless told otherwise.
const DEFAULT_WAIT_MS = 10 * 60_000;

/**
 * The project-chat API with a personal API token. Sends are exactly-once: each intended message
 * gets one idempotency key (yours or a new UUID) that every retry reuses, so a retried send can
 * never become two messages. A token is not tied to one project: every project call names its
 * project, and `projects.list()` says which ones the token reaches. Every method takes `signal` and `timeout`; a call's promise gives its
 * body, and its `withResponse()` the body with the answer's headers. Errors are ProblemError,
 * ConnectionError or TimeoutError.
 */
export class ProjectChatClient {
  readonly projects;
  readonly credits;
  readonly usage;
  readonly chats;
  readonly messages;
  readonly questions;
  readonly chains;
  readonly queue;
  readonly events;
  readonly webhooks;

  constructor(options: ClientOptions & { token: string }) {
    const http = new Http(options, options.token);
    type Request = Parameters<Http["request"]>[2];
    const answer = <T>(method: string, path: string, rest: Omit<Request, "repeatable"> & { repeatable?: boolean }) =>
      http.request<T>(method, path, { repeatable: method !== "POST", ...rest });
    const call = <T>(method: string, path: string, rest: Omit<Request, "repeatable"> & { repeatable?: boolean }) => new ApiPromise<T>(answer<T>(method, path, rest));
    // The chat, its queue and its message pages say which event they show: Chat-Event-Id.
    const read = <T>(path: string, rest: Omit<Request, "repeatable">) => new ApiPromise<T, WithEventId<T>>(answer<T>("GET", path, rest).then(withEventId));
    const list = <T>(path: string, options?: CallOptions, query?: Request["query"]) => itemsOf(answer<{ items: T[] }>("GET", path, { query, ...callOptions(options) }));
    const remove = (path: string, options?: CallOptions) => call<void>("DELETE", path, callOptions(options));
    const follow = (projectId: string, chatId: string, options?: FollowOptions): AsyncGenerator<ChatEvent> => followChat(http, `${chatPath(projectId, chatId)}/events`, options);
    // One idempotency key per intended message or answer (the caller's or a new UUID), reused by every retry.
    const keyed = <T>(path: string, body: unknown, options: SendOptions, headers: Record<string, string> = {}) =>
      call<T>("POST", path, { body, headers: { "idempotency-key": options.idempotencyKey ?? crypto.randomUUID(), ...headers }, repeatable: true, ...callOptions(options) });
    const send = (projectId: string, chatId: string, input: SendInput, options: MessageSendOptions = {}) =>
      keyed<Submission>(`${chatPath(projectId, chatId)}/messages`, input, options, options.ifBusy ? { "if-busy": options.ifBusy } : {});
    const page = (projectId: string, chatId: string, options: CallOptions & { cursor?: string; limit?: number } = {}) =>
      read<MessagePage>(`${chatPath(projectId, chatId)}/messages`, { query: { limit: options.limit, cursor: options.cursor }, ...callOptions(options) });

    this.projects = {
      /** The active projects the token's account is a member of, by name, with its role in each: where project ids come from. */
      list: (options?: CallOptions) => list<ProjectSummary>("/v1/projects", options),
    };

    this.credits = {
      /** Whether a task can start now and what one costs; `balance` (the paying owner's) is null unless you own the project. */
      get: (projectId: string, options?: CallOptions) => call<ProjectCredits>("GET", `${projectPath(projectId)}/credits`, callOptions(options)),
    };

    this.usage = {
      /**
       * The project's ended tasks per UTC day, oldest first, only days that had one: `from` and `to` are
       * YYYY-MM-DD, inclusive (default the 30 days to today; at most 366 days; a bad range is a 400 ProblemError).
       */
      get: (projectId: string, options: UsageOptions = {}) => list<UsageDay>(`${projectPath(projectId)}/usage`, options, { from: options.from, to: options.to }),
    };

    this.chats = {
      list: (projectId: string, options: CallOptions & { archived?: boolean } = {}) =>
        list<Chat>(chatsPath(projectId), options, { archived: options.archived ? "true" : undefined }),
      /** Idempotent: one key per intended chat (a new UUID unless given), reused by every retry. */
      create: (projectId: string, input: { title: string }, options: SendOptions = {}) => keyed<Chat>(chatsPath(projectId), input, options),
      get: (projectId: string, chatId: string, options?: CallOptions) => read<Chat>(chatPath(projectId, chatId), callOptions(options)),
      rename: (projectId: string, chatId: string, input: { title: string }, options?: CallOptions) =>
        call<Chat>("PATCH", chatPath(projectId, chatId), { body: input, repeatable: true, ...callOptions(options) }),
      archive: (projectId: string, chatId: string, options?: CallOptions) =>
        call<Chat>("POST", `${chatPath(projectId, chatId)}/archive`, { repeatable: true, ...callOptions(options) }),
      restore: (projectId: string, chatId: string, options?: CallOptions) =>
        call<Chat>("POST", `${chatPath(projectId, chatId)}/restore`, { repeatable: true, ...callOptions(options) }),
      /**
       * A new chat that starts as a copy of this one's history up to and including `atMessageId` (with `rerun`, up to just
       * before that user message, whose text is then sent to the fork: `submissionId`). Idempotent: one key per intended
       * fork (a new UUID unless given), reused by every retry.
       */
      fork: (projectId: string, chatId: string, input: ForkInput, options: SendOptions = {}) => keyed<Forked>(`${chatPath(projectId, chatId)}/fork`, input, options),
    };

    this.messages = {
      /** Sends a message; `ifBusy` says what it does when the chat is busy (a replay answers the first outcome whatever it says). */
      send,
      steer: (projectId: string, chatId: string, input: SendInput, options: SendOptions = {}) => keyed<Submission>(`${chatPath(projectId, chatId)}/steer`, input, options),
      /** Stops a working reply (a finished one is answered as it is, so repeating is safe). */
      stop: (projectId: string, chatId: string, messageId: string, options?: CallOptions) =>
        call<Message>("POST", `${chatPath(projectId, chatId)}/messages/${enc(messageId)}/stop`, { repeatable: true, ...callOptions(options) }),
      /** One page of messages, newest first; its Chat-Event-Id (withResponse) is where to follow the chat from. */
      page,
      /** Every message, newest first, page after page (the signal and timeout apply to each page). */
      list: (projectId: string, chatId: string, options: CallOptions & { limit?: number } = {}): AsyncIterable<Message> =>
        everyItem((cursor) => page(projectId, chatId, { ...options, cursor })),
      /**
       * Sends a message and waits for its task's reply to end (success, failed or interrupted_by_user): that reply. A reply
       * that asks names its question (`questionId`: read it with questions.get, answer it with questions.answer).
       * Its timeout is the whole wait (default 10 minutes); a reply that takes longer throws TimeoutError.
       */
      sendAndWait: async (projectId: string, chatId: string, input: SendInput, options: MessageSendOptions = {}): Promise<Message> => {
        const wait = checkTimeout(options.timeout ?? DEFAULT_WAIT_MS);
        const clock = new AbortController();
        const timer = setTimeout(() => clock.abort(new TimeoutError(wait)), wait);
        const signal = AbortSignal.any([clock.signal, ...(options.signal ? [options.signal] : [])]);
        // Following first, from the stream's own snapshot, so the end cannot pass before we look.
        const events = follow(projectId, chatId, { signal });
        try {
          const first = await events.next();
          if (first.done) throw signal.reason ?? new Error("the chat's event stream ended");
          const sent = await send(projectId, chatId, input, { idempotencyKey: options.idempotencyKey, ifBusy: options.ifBusy, signal });
          for await (const event of events) {
            const m = event.type === "message" ? event.data : undefined;
            if (m?.role === "owner" && m.submissionId === sent.submissionId && m.status !== "working") return m;
          }
          throw signal.reason ?? new Error("the chat's event stream ended");
        } finally {
          clearTimeout(timer);
          clock.abort();
          await events.return(undefined);
        }
      },
    };

    this.questions = {
      /** A question the chat's agent asked (the chat's pendingQuestionId, a reply's questionId), as it stands. */
      get: (projectId: string, chatId: string, questionId: string, options?: CallOptions) =>
        call<Question>("GET", `${chatPath(projectId, chatId)}/questions/${enc(questionId)}`, callOptions(options)),
      /**
       * Answers a pending question: a message to the agent in words, exactly-once like send (one key per intended
       * answer, reused by every retry). A question no longer pending is a 409 question_not_pending ProblemError.
       */
      answer: (projectId: string, chatId: string, questionId: string, answer: AnswerInput, options: SendOptions = {}) =>
        keyed<AnswerSubmission>(`${chatPath(projectId, chatId)}/questions/${enc(questionId)}/answer`, answer, options),
    };

    this.chains = {
      /** Where the work a submission started stands, across the questions its replies asked (state, the last submission, its reply and question). */
      get: (projectId: string, chatId: string, submissionId: string, options?: CallOptions) =>
        call<Chain>("GET", `${chatPath(projectId, chatId)}/submissions/${enc(submissionId)}/chain`, callOptions(options)),
      /** Cancels the chain by its state: the waiting submission cancelled, the working reply stopped, or the waiting question withdrawn; safe to repeat. */
      cancel: (projectId: string, chatId: string, submissionId: string, options?: CallOptions) =>
        call<Chain>("POST", `${chatPath(projectId, chatId)}/submissions/${enc(submissionId)}/chain/cancel`, { repeatable: true, ...callOptions(options) }),
    };

    this.queue = {
      get: (projectId: string, chatId: string, options?: CallOptions) => read<Queue>(`${chatPath(projectId, chatId)}/queue`, callOptions(options)),
      /** Removes a submission that has not started; 204 again when repeated. */
      cancel: (projectId: string, chatId: string, submissionId: string, options?: CallOptions) => remove(`${chatPath(projectId, chatId)}/queue/${enc(submissionId)}`, options),
    };

    this.events = { follow };

    this.webhooks = {
      /** Not repeated after a network error (it would make a second endpoint): list and check instead. */
      create: (projectId: string, input: { url: string; events?: WebhookEndpoint["events"]; description?: string }, options?: CallOptions) =>
        call<CreatedWebhook>("POST", webhooksPath(projectId), { body: input, repeatable: false, ...callOptions(options) }),
      list: (projectId: string, options?: CallOptions) => list<WebhookEndpoint>(webhooksPath(projectId), options),
      delete: (projectId: string, endpointId: string, options?: CallOptions) => remove(`${webhooksPath(projectId)}/${enc(endpointId)}`, options),
      deliveries: (projectId: string, endpointId: string, options?: CallOptions) => list<WebhookDelivery>(`${webhooksPath(projectId)}/${enc(endpointId)}/deliveries`, options),
    };
  }
}
