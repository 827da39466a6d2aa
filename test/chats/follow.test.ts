import { describe, expect } from "vitest";
import { Chat, Message } from "../../src/chats/schemas";
import { call, chatsPath, newToken, room, send, world } from "../helpers";
import { settle } from "../clock";
import { openEvents, type StreamEvent } from "../sse";
import { it } from "../fixtures/chat";

const eventsPath = (w: { projectId: string }, chatId: string) => `${chatsPath(w)}/${chatId}/events`;
const isFinalReply = (e: StreamEvent) => e.type === "message" && e.data.role === "owner" && e.data.status !== "working";

describe("following a chat", () => {
  it("starts with a snapshot and follows a message to the reply's final message", async ({ clock, w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(s.headers.get("cache-control")).toBe("no-store");
    const snapshot = await s.next();
    expect(snapshot.type).toBe("snapshot");
    expect(Chat.parse(snapshot.data.chat)).toMatchObject({ id: chat.id, isWorking: false });
    expect(snapshot.data.queue).toEqual({ items: [] });

    expect((await send(w, chat.id, "follow me")).status).toBe(202);
    await settle(room(chat.id), clock);
    const final = await s.until(isFinalReply);
    expect(Message.parse(final.data)).toMatchObject({ status: "success" });
    await s.until((e) => e.type === "chat" && e.data.isWorking === false && e.id > final.id);

    const ids = s.events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids.slice(1)).size).toBe(ids.length - 1);
    expect(s.events.find((e) => e.type === "message" && e.data.role === "user")!.data.content).toBe("follow me");
    const history = (await call("GET", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token })).json.items;
    expect(history.find((m: { id: string }) => m.id === final.data.id)).toEqual(final.data);
    await s.close();
  });
});

describe("replies that grow", () => {
  it("streams deltas that add up to the reply's final content, and the final message has it all", async ({ clock, w, chat }) => {
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    await s.next();
    await send(w, chat.id, "grow a reply for me, part by part");
    await settle(room(chat.id), clock);
    const final = await s.until(isFinalReply);
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === final.data.id);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.id < final.id)).toBe(true);
    expect(deltas.map((d) => d.data.text).join("")).toBe(final.data.content);
    expect(s.events.filter((e) => e.type === "message" && e.data.id === final.data.id).map((e) => e.data.status)).toEqual(["working", "success"]);
    await s.close();
  });
});

describe("refusals, answered as for the other chat reads", () => {
  it("answers 401, 403, 404 and 400 as problem+json, never as a stream", async ({ w, chat }) => {
    const cases: [string | null, string, Record<string, string>, number, string][] = [
      [null, eventsPath(w, chat.id), {}, 401, "unauthorized"],
      [w.session, eventsPath(w, chat.id), {}, 401, "unauthorized"],
      [await newToken(w.session, ["chat:write"]), eventsPath(w, chat.id), {}, 403, "insufficient_scope"],
      [(await world()).token, eventsPath(w, chat.id), {}, 404, "not_found"],
      [w.token, eventsPath(w, crypto.randomUUID()), {}, 404, "not_found"],
      [w.token, eventsPath(w, "not-a-uuid"), {}, 404, "not_found"],
      [w.token, eventsPath(w, chat.id), { "last-event-id": "yesterday" }, 400, "invalid_request"],
      [w.token, eventsPath(w, chat.id), { "last-event-id": "-1" }, 400, "invalid_request"],
      [w.token, `${eventsPath(w, chat.id)}?after=1.5`, {}, 400, "invalid_request"],
      [w.token, `${eventsPath(w, chat.id)}?since=1`, {}, 400, "invalid_request"],
    ];
    for (const [token, path, headers, status, code] of cases) {
      const s = await openEvents(path, token, headers);
      expect(s.status, `${path} ${JSON.stringify(headers)}`).toBe(status);
      expect(s.headers.get("content-type")).toContain("application/problem+json");
      expect(s.json.code).toBe(code);
    }
    expect(await room(chat.id).listenerCount()).toBe(0);
  });

  it("counts opening a stream as one request for the rate limit", async ({ w, chat }) => {
    const remaining = (h: Headers) => Number(/r=(\d+)/.exec(h.get("ratelimit") ?? "")![1]);
    const before = await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token });
    const s = await openEvents(eventsPath(w, chat.id), w.token);
    expect(remaining(s.headers)).toBe(remaining(before.headers) - 1);
    expect(s.headers.get("ratelimit-policy")).toBeTruthy();
    await s.close();
  });

  it("prefers Last-Event-ID to ?after= when both are sent, as EventSource resends the original URL", async ({ w, chat }) => {
    await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "renamed" } });
    const s = await openEvents(`${eventsPath(w, chat.id)}?after=0`, w.token, { "last-event-id": "1" });
    const first = await s.next();
    expect(first.id).toBeGreaterThan(1);
    expect(first.type).not.toBe("snapshot");
    await s.close();
  });
});
