import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, vi } from "vitest";
import { MAX_STREAMS_PER_TOKEN, STREAM_LEASE_MS } from "../../src/auth/token-gate";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { STREAM_MAX_AGE_MS } from "../../src/chats/room/streams";
import { MAX_AGE_JITTER_MS } from "../../src/chats/room/listeners";
import { admin, call, chatsPath, env, expectProblem, inDays, newChat, room, send, type World } from "../helpers";
import { runNextAlarm, settle } from "../clock";
import { openEvents, type StreamEvent } from "../sse";
import { it } from "../fixtures/chat";

const eventsPath = (w: { projectId: string }, chatId: string) => `${chatsPath(w)}/${chatId}/events`;
const pulse = (chatId: string, now = Date.now()) => room(chatId).pulseListeners(now);
const isFinalReply = (e: StreamEvent) => e.type === "message" && e.data.role === "owner" && e.data.status !== "working";
const settledAfter = (reply: StreamEvent) => (e: StreamEvent) => e.type === "chat" && e.data.isWorking === false && e.id > reply.id;
const comparable = (events: StreamEvent[]) => events.map((e) => [e.id, e.type, e.data]);

/** Reads a stream to its end; "ended" whether it closed or errored, so a dropped stream does not hang its reader. */
async function drain(body: ReadableStream<Uint8Array>): Promise<"ended"> {
  const reader = body.getReader();
  try {
    while (!(await reader.read()).done);
  } catch {
    // Dropped: the reader sees an error, which ends it as well.
  }
  return "ended";
}

async function tokenWithId(w: World, scopes = ["chat:read", "chat:write"]) {
  const r = await call("POST", "/auth/api-tokens", { token: w.session, body: { name: "stream", scopes, expiresAt: inDays(1) } });
  expect(r.status, r.text).toBe(201);
  return { token: r.json.token as string, id: r.json.item.id as string };
}

describe("keeping streams alive and ending them", () => {
  it("sends a keep-alive comment on each pulse while nothing else happens", async ({ w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    await s.next();
    expect(s.retry).toBe(2000);
    await pulse(chat.id);
    await pulse(chat.id);
    const keepAlives = () => s.comments.filter((t) => t === "keep-alive").length;
    await s.received(() => keepAlives() >= 2);
    expect(keepAlives()).toBe(2);
    expect(s.ended()).toBe(false);
    await s.close();
  });

  it("ends a stream after five minutes (and at most 30 s of jitter) with a reconnect hint", async ({ w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    await s.next();
    await pulse(chat.id, Date.now() + STREAM_MAX_AGE_MS - 1000);
    expect(await room(chat.id).listenerCount(), "not before five minutes").toBe(1);
    await pulse(chat.id, Date.now() + STREAM_MAX_AGE_MS + MAX_AGE_JITTER_MS);
    await s.closed();
    expect(s.comments.at(-1)).toMatch(/reconnect with Last-Event-ID/);
    expect(await room(chat.id).listenerCount()).toBe(0);
  });

  it("ends a stream within one pulse of its token's revocation", async ({ w, chat }) => {
    const { token, id } = await tokenWithId(w);
    const s = await openEvents(eventsPath(w, chat.id), token);
    await s.next();
    expect((await call("DELETE", `/auth/api-tokens/${id}`, { token: w.session })).status).toBe(204);
    await pulse(chat.id);
    await s.closed();
    expectProblem(await call("GET", eventsPath(w, chat.id), { token }), 401, "unauthorized");
  });

  it("ends a stream within one pulse of its token's expiry, long before the stream's own age limit", async ({ w, chat }) => {
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const made = await call("POST", "/auth/api-tokens", { token: w.session, body: { name: "short", scopes: ["chat:read"], expiresAt } });
    expect(made.status, made.text).toBe(201);
    const s = await openEvents(eventsPath(w, chat.id), made.json.token);
    await s.next();
    // A second after the token's end, and minutes before the stream would end for its age.
    const later = Date.parse(expiresAt) + 1000;
    expect(later).toBeLessThan(Date.now() + STREAM_MAX_AGE_MS);
    await pulse(chat.id, Date.now() + 30_000);
    expect(await room(chat.id).listenerCount(), "still valid half a minute in").toBe(1);
    vi.spyOn(Date, "now").mockReturnValue(later);
    await pulse(chat.id, later);
    expect(await room(chat.id).listenerCount(), "ended by the pulse after the token's end").toBe(0);
    await s.closed();
  });

  it("ends a stream once its account loses access to the project", async ({ w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    await s.next();
    expect((await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "suspended" })).status).toBe(200);
    await pulse(chat.id);
    await s.closed();
  });

  it("keeps streams open while the token and access hold", async ({ w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    await s.next();
    await pulse(chat.id);
    expect(await room(chat.id).listenerCount()).toBe(1);
    await s.close();
  });
});

describe("the stream limit per token", () => {
  it(`allows ${MAX_STREAMS_PER_TOKEN} open streams per token, refuses the next with 429, and frees a closed one's place`, async ({ w }) => {
    const chats = [await newChat(w, "a"), await newChat(w, "b")];
    const open = await Promise.all(Array.from({ length: MAX_STREAMS_PER_TOKEN }, (_, i) => openEvents(eventsPath(w, chats[i % 2]!.id), w.token)));
    expect(open.map((s) => s.status)).toEqual(Array(MAX_STREAMS_PER_TOKEN).fill(200));
    const refused = await call("GET", eventsPath(w, chats[0]!.id), { token: w.token });
    expectProblem(refused, 429, "too_many_streams");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("ratelimit")).toMatch(/r=\d+/);

    const other = await tokenWithId(w);
    const elsewhere = await openEvents(eventsPath(w, chats[0]!.id), other.token);
    expect(elsewhere.status, "another token has its own places").toBe(200);

    await open[0]!.close();
    // The object learns of a closed stream when the cancel reaches it through the RPC stream, or when
    // a later write fails; neither is an event the test can await, so this one wait polls, with the pulse.
    await vi.waitFor(
      async () => {
        await pulse(chats[0]!.id);
        expect(await room(chats[0]!.id).listenerCount()).toBe(MAX_STREAMS_PER_TOKEN / 2);
      },
      { timeout: 10_000, interval: 50 },
    );
    const again = await openEvents(eventsPath(w, chats[0]!.id), w.token);
    expect(again.status).toBe(200);
    await Promise.all([...open, elsewhere, again].map((s) => s.close()));
  }, 15_000);

  it("ends the stream whose client hung up when its Worker says so, and frees its place", async ({ w, chat }) => {
    const streams = Array.from({ length: MAX_STREAMS_PER_TOKEN }, () => new AbortController());
    for (const client of streams) {
      const opened = await exports.default.fetch(
        new Request(`https://service.test${eventsPath(w, chat.id)}`, { headers: { authorization: `Bearer ${w.token}` }, signal: client.signal }),
      );
      expect(opened.status).toBe(200);
      await opened.body!.getReader().read();
    }
    expect(await room(chat.id).listenerCount()).toBe(MAX_STREAMS_PER_TOKEN);
    streams[0]!.abort();
    // Told by the Worker (the object's own writes would find the hang-up too, later): exactly that one stream ends.
    await vi.waitFor(async () => expect(await room(chat.id).hungUp()).toHaveLength(1), { timeout: 5_000, interval: 20 });
    expect(await room(chat.id).listenerCount()).toBe(MAX_STREAMS_PER_TOKEN - 1);
    // The object hands the place back to the token's gate in the background.
    const again = await vi.waitFor(async () => {
      const opened = await openEvents(eventsPath(w, chat.id), w.token);
      expect(opened.status, "the place is free").toBe(200);
      return opened;
    });
    await again.close();
    for (const client of streams) client.abort();
  });

  it("frees the place of a stream whose chat object stopped renewing it", async () => {
    const gate = env.TOKEN_GATE.getByName(`lease-test-${crypto.randomUUID()}`);
    for (let i = 0; i < MAX_STREAMS_PER_TOKEN; i++) expect(await gate.openStream(crypto.randomUUID())).toEqual({ kind: "opened" });
    expect((await gate.openStream(crypto.randomUUID())).kind).toBe("limited");
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + STREAM_LEASE_MS + 1);
    expect(await gate.openStream(crypto.randomUUID())).toEqual({ kind: "opened" });
  });
});

describe("resuming", () => {
  it("replays exactly what a dropped listener missed: no duplicate, no gap", async ({ clock, w, chat }) => {
    const steady = await openEvents(eventsPath(w, chat.id), w.token);
    const dropped = await openEvents(eventsPath(w, chat.id), w.token);
    const [snapshot] = [await steady.next(), await dropped.next()];
    expect((await send(w, chat.id, "first")).status).toBe(202);
    await settle(room(chat.id), clock);
    await dropped.until((e) => e.type === "message" && e.data.role === "user");
    await dropped.close();
    expect((await send(w, chat.id, "second")).status).toBe(202);
    await settle(room(chat.id), clock);
    const last = await steady.until((e) => isFinalReply(e) && e.data.content.includes("second"), 10_000);
    await steady.until(settledAfter(last));

    const seen = dropped.events.filter((e) => e.type !== "snapshot");
    const resumed = await openEvents(eventsPath(w, chat.id), w.token, { "last-event-id": String(seen.at(-1)!.id) });
    const rest: StreamEvent[] = [];
    const expected = steady.events.filter((e) => e.type !== "snapshot");
    while (seen.length + rest.length < expected.length) rest.push(await resumed.next());
    expect(comparable([...seen, ...rest])).toEqual(comparable(expected));
    expect(snapshot!.type).toBe("snapshot");
    await Promise.all([steady.close(), resumed.close()]);
  });

  it("gives two listeners identical sequences", async ({ clock, w, chat }) => {
    const [a, b] = await Promise.all([openEvents(eventsPath(w, chat.id), w.token), openEvents(eventsPath(w, chat.id), w.token)]);
    await Promise.all([a.next(), b.next()]);
    await send(w, chat.id, "one");
    await send(w, chat.id, "two");
    await settle(room(chat.id), clock);
    const done = await a.until((e) => isFinalReply(e) && e.data.content.includes("two"), 10_000);
    await a.until(settledAfter(done));
    await b.until(settledAfter(done));
    expect(comparable(b.events.slice(0, a.events.length))).toEqual(comparable(a.events));
    await Promise.all([a.close(), b.close()]);
  });

  it("resumes after the chat object restarts mid-task with a listener open, and the history matches", async ({ clock, w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    const snapshot = await s.next();
    await send(w, chat.id, "survive an eviction");
    await runNextAlarm(room(chat.id), clock);
    await s.until((e) => e.type === "message" && e.data.role === "owner");
    // A restart drops every connection to the object (eviction proper waits for open streams to end).
    await abortAllDurableObjects();
    await s.closed();
    const resumed = await openEvents(eventsPath(w, chat.id), w.token, { "last-event-id": String(s.events.at(-1)!.id) });
    await settle(room(chat.id), clock);
    const final = await resumed.until(isFinalReply, 10_000);
    await resumed.until(settledAfter(final));
    const replay = await openEvents(`${eventsPath(w, chat.id)}?after=${snapshot.id}`, w.token);
    const all = [...s.events.slice(1), ...resumed.events];
    const everything: StreamEvent[] = [];
    while (everything.length < all.length) everything.push(await replay.next());
    expect(comparable(all)).toEqual(comparable(everything));
    const history = (await call("GET", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token })).json.items;
    expect(history[0]).toEqual(final.data);
    await Promise.all([resumed.close(), replay.close()]);
  }, 15_000);

  it("answers a resume point it no longer keeps, or never gave out, with a fresh snapshot", async ({ w, chat }) => {
    const future = await openEvents(eventsPath(w, chat.id), w.token, { "last-event-id": "999999" });
    expect((await future.next()).type).toBe("snapshot");
    await future.close();
    await runInDurableObject(room(chat.id), (_: ChatRoom, state) => {
      state.storage.sql.exec("DELETE FROM events");
      state.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('events_pruned_through', 5)");
    });
    // The object reads its log's state when it starts, as after a real prune and a restart.
    await abortAllDurableObjects();
    const stale = await openEvents(`${eventsPath(w, chat.id)}?after=1`, w.token);
    const snapshot = await stale.next();
    // At the newest id, past the pruned ones (the object re-announced the chat, whose event had been deleted).
    expect(snapshot.type).toBe("snapshot");
    expect(snapshot.id).toBeGreaterThanOrEqual(5);
    await stale.close();
  });

  it("prunes events older than 24 hours as it appends", async ({ w, chat }) => {
    const before = await runInDurableObject(room(chat.id), (_: ChatRoom, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM events").one().n);
    expect(before).toBeGreaterThan(0);
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 25 * 3600_000);
    await evictDurableObject(room(chat.id));
    expect((await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "renamed" } })).status).toBe(200);
    const ids = await runInDurableObject(room(chat.id), (_: ChatRoom, state) =>
      state.storage.sql
        .exec<{ id: number }>("SELECT id FROM events")
        .toArray()
        .map((r) => r.id),
    );
    expect(ids.length).toBeGreaterThan(0);
    expect(Math.min(...ids)).toBeGreaterThan(before);
  });
});

describe("slow listeners", () => {
  it("drops a listener that stops reading, without harm to the chat or the others", async ({ clock, w, chat }) => {
    const healthy = await openEvents(eventsPath(w, chat.id), w.token);
    await healthy.next();
    const stuck = await exports.default.fetch(new Request(`https://service.test${eventsPath(w, chat.id)}`, { headers: { authorization: `Bearer ${w.token}` } }));
    expect(stuck.status).toBe(200);
    const big = "x".repeat(60_000);
    for (let i = 0; i < 4; i++) expect((await send(w, chat.id, `${i} ${big}`)).status).toBe(202);
    await settle(room(chat.id), clock);
    const last = await healthy.until((e) => isFinalReply(e) && e.data.content.startsWith("Done") && e.data.content.includes("“3 "), 15_000);
    await healthy.until(settledAfter(last));
    expect(await room(chat.id).listenerCount()).toBe(2);
    const now = Date.now();
    await pulse(chat.id, now);
    await pulse(chat.id, now + 31_000);
    expect(await room(chat.id).listenerCount()).toBe(1);
    expect(await drain(stuck.body!)).toBe("ended");
    await pulse(chat.id);
    expect(healthy.ended()).toBe(false);
    expect((await send(w, chat.id, "still fine")).status).toBe(202);
    await settle(room(chat.id), clock);
    await healthy.until((e) => isFinalReply(e) && e.data.content.includes("still fine"), 10_000);
    await healthy.close();
  });
});
