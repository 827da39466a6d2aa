import { createRoute } from "@hono/zod-openapi";
import type { GatedEnv } from "../../auth/gate";
import { createRouter } from "../../http/router";
import { chatService, served } from "../service/chat-service";
import { ChatParams, EventsHeaders, EventsQuery } from "../schemas";
import { ChatEvent, EVENT_DATA_COMPONENTS, LOGGED_EVENT_TYPES, spokenList } from "../event-registry";
import { projectProblems, read, security } from "../../projects/guards";

/** Following a chat live: its resumable event stream. */
export const eventRoutes = createRouter<GatedEnv>();
for (const [name, schema] of Object.entries(EVENT_DATA_COMPONENTS)) eventRoutes.openAPIRegistry.register(name, schema);

eventRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{projectId}/chats/{chatId}/events",
    tags: ["Events"],
    operationId: "followChatEvents",
    security,
    middleware: read,
    summary: "Follow a chat live: a resumable Server-Sent Events stream",
    description:
      "Opens with a `retry: 2000` frame (the reconnection delay for EventSource; it has no `data:` line, and a reader skips frames without data), then a `snapshot` (or, with Last-Event-ID / `after`, replays every event after that id), then sends " +
      `${spokenList(LOGGED_EVENT_TYPES)} events as they happen: the queue is the snapshot's with the entry events applied in order. ` +
      "Ids increase strictly per chat; events are kept at least 24 hours; a resume point older than that, or whose replay would pass 8 MB, gets a " +
      "fresh snapshot. A stream whose reader leaves what it is sent untaken for 30 s is closed. A `: keep-alive` comment comes " +
      "every 2.5 s. The server ends a stream after 5 to 5½ minutes, or within 10 s of the token's revocation or expiry or the loss of project access; " +
      "reconnect with Last-Event-ID. Opening a stream counts as one request; at most 10 streams per token may be open at once (429 `too_many_streams` " +
      "beyond, with Retry-After; the per-minute limit stays `rate_limited`); a closed stream frees its place within 15 s.",
    request: { params: ChatParams, query: EventsQuery, headers: EventsHeaders },
    responses: {
      200: {
        description:
          "The event stream: `text/event-stream` frames of `id`, `event` and one `data:` line of JSON, and `: keep-alive` comments. OpenAPI 3.1 cannot type " +
          "a stream's items, so the schema is that of one frame: ChatEvent, a union by `event` whose `data` is JSON text of the component its `contentSchema` names (Chat, QueueEntry, Message, …).",
        content: { "text/event-stream": { schema: ChatEvent } },
      },
      ...projectProblems,
    },
  }),
  async (c) => {
    const resume = c.req.valid("header")["last-event-id"] ?? c.req.valid("query").after;
    const { stream, unfollow } = served(await chatService(c).follow(c.req.valid("param"), resume === undefined ? null : Number(resume))).body;
    untilHangUp(c.req.raw.signal, () => c.executionCtx.waitUntil(unfollow().catch(() => undefined)));
    return c.body(stream, 200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
  },
);

/**
 * The client hung up: the Worker sees it first (at the first write that fails, or at once), the chat object
 * only at its own next write, so the object is told, and the stream's place is free then. Also when the
 * client was gone before the stream was handed over.
 */
function untilHangUp(signal: AbortSignal, hungUp: () => void): void {
  const once = () => {
    try {
      hungUp();
    } catch {
      // The request's context is over: the object's next write finds the hang-up instead.
    }
  };
  if (signal.aborted) once();
  else signal.addEventListener("abort", once, { once: true });
}
