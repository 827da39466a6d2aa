// What the transport does on its own, in Node: against stand-in servers and fetches, so that time and failures are the test's to choose.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
// @ts-expect-error: the project's scripts are JavaScript
import { freePort } from "../../scripts/lib.mjs";
import { type ChatEvent, ConnectionError, ProjectChatClient, TimeoutError } from "../src/index.ts";

const [projectId, chatId] = [crypto.randomUUID(), crypto.randomUUID()];
const chat = { id: chatId, title: "stand-in" };
const json = (body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...headers } });
const limited = () =>
  new Response(JSON.stringify({ type: "about:blank", title: "Too Many Requests", status: 429, detail: "later", code: "rate_limited" }), {
    status: 429,
    headers: { "content-type": "application/problem+json", "retry-after": "3600" },
  });
const frame = (id: number, title: string) => `id: ${id}\nevent: chat\ndata: ${JSON.stringify({ ...chat, title })}\n\n`;

/** A client whose fetch answers from `answers` in turn, counting the calls. */
function scripted(...answers: (() => Response)[]) {
  const calls: RequestInit[] = [];
  const client = new ProjectChatClient({
    baseUrl: "http://api.test",
    token: "pct_test",
    fetch: async (_url, init) => {
      calls.push(init ?? {});
      const next = answers.shift();
      if (!next) throw new Error("no answer left");
      return next();
    },
  });
  return { client, calls };
}

/** A local server whose handler the test writes; closed after the test. */
const servers: ReturnType<typeof createServer>[] = [];
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  vi.useRealTimers();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe("Retry-After", () => {
  it("is honoured up to a minute by a request, then it tries again", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { client, calls } = scripted(limited, () => json(chat, { "chat-event-id": "7" }));
    const got = client.chats.get(projectId, chatId);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(await got).toEqual(chat);
  });

  it("is honoured up to a minute by follow, then it opens the stream", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const { client, calls } = scripted(limited, () => new Response(frame(1, "after the wait"), { headers: { "content-type": "text/event-stream" } }));
    const stop = new AbortController();
    const first = client.events.follow(projectId, chatId, { signal: stop.signal }).next();
    await vi.advanceTimersByTimeAsync(59_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect((await first).value).toMatchObject({ id: 1, type: "chat", data: { title: "after the wait" } });
    stop.abort();
  });
});

describe("the answer with its headers", () => {
  it("is read by one request however the call is read", async () => {
    const { client, calls } = scripted(() => json(chat, { "chat-event-id": "7", ratelimit: '"per-token";r=4;t=30', "ratelimit-policy": '"per-token";q=5;w=60' }));
    const got = client.chats.get(projectId, chatId);
    expect(await got).toEqual(chat);
    const answer = await got.withResponse();
    expect(answer).toMatchObject({ data: chat, chatEventId: 7, rateLimit: { limit: 5, remaining: 4, resetSeconds: 30 } });
    expect(answer.response.headers.get("chat-event-id")).toBe("7");
    expect(await got.catch(() => "unreached")).toEqual(chat);
    expect(await got.finally(() => undefined)).toEqual(chat);
    expect(calls).toHaveLength(1);
  });

  it("reports a rejection where the call is read, and only there", async () => {
    const { client } = scripted(() => new Response("{}", { status: 404 }));
    const got = client.chats.get(projectId, chatId);
    await expect(got.withResponse()).rejects.toMatchObject({ status: 404 });
    await expect(got).rejects.toMatchObject({ status: 404 });
  });
});

describe("timeouts", () => {
  it("count the body too: an answer that stalls half way times out", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":');
    });
    const client = new ProjectChatClient({ baseUrl: base, token: "pct_test", maxRetries: 0 });
    await expect(client.chats.get(projectId, chatId, { timeout: 200 })).rejects.toBeInstanceOf(TimeoutError);
  });

  it("are whole milliseconds that setTimeout can keep", () => {
    for (const timeout of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
      expect(() => new ProjectChatClient({ baseUrl: "http://api.test", token: "t", timeout })).toThrow(RangeError);
    const { client } = scripted();
    return expect(client.chats.get(projectId, chatId, { timeout: -5 })).rejects.toThrow(RangeError);
  });
});

describe("follow", () => {
  it("opens a silent stream again from its last event, but the caller's time with an event is not silence", async () => {
    const seen: (string | undefined)[] = [];
    const base = await serve((req, res) => {
      seen.push(req.headers["last-event-id"] as string | undefined);
      res.writeHead(200, { "content-type": "text/event-stream" });
      // The first stream sends two events, the second while the caller holds the first, and then nothing, not even a keep-alive.
      if (seen.length > 1) return void res.write(frame(3, "three"));
      res.write(frame(1, "one"));
      setTimeout(() => res.write(frame(2, "two")), 100);
    });
    const client = new ProjectChatClient({ baseUrl: base, token: "pct_test", timeout: 300 });
    const stop = new AbortController();
    const events: ChatEvent[] = [];
    for await (const event of client.events.follow(projectId, chatId, { signal: stop.signal })) {
      events.push(event);
      // Holding the first event longer than the timeout: the second is still taken from the same stream.
      if (event.id === 1) await new Promise((resolve) => setTimeout(resolve, 600));
      if (event.id === 3) stop.abort();
    }
    expect(events.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(seen).toEqual([undefined, "2"]);
  });

  it("closes its stream when the loop is left", async () => {
    let closed = false;
    const base = await serve((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(frame(1, "one"));
      req.socket.on("close", () => {
        closed = true;
      });
    });
    const client = new ProjectChatClient({ baseUrl: base, token: "pct_test" });
    for await (const event of client.events.follow(projectId, chatId)) if (event.id === 1) break;
    await vi.waitFor(() => expect(closed).toBe(true));
  });
});

it("keeps the runtime's own error as the cause of a ConnectionError", async () => {
  const client = new ProjectChatClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, token: "pct_test", maxRetries: 0 });
  const error = await client.queue.get(projectId, chatId).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConnectionError);
  expect((error as ConnectionError).cause).toBeInstanceOf(TypeError);
  expect(((error as ConnectionError).cause as TypeError).cause).toMatchObject({ code: "ECONNREFUSED" });
});
