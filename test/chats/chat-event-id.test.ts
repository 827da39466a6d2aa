import { describe, expect, it } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, expectProblem, newChat, room, send, world } from "../helpers";
import { openEvents } from "../sse";

describe("Chat-Event-Id: joining a chat with history, exactly", () => {
  it("a page read mid-reply and the stream after its id rebuild the reply with nothing missed or repeated", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "join me mid-reply");
    await runNextAlarm(room(c.id), clock); // dispatched: the reply is working
    await runNextAlarm(room(c.id), clock); // its first part
    const page = await call("GET", `${chatsPath(w)}/${c.id}/messages`, { token: w.token });
    const n = page.headers.get("chat-event-id");
    expect(n).toMatch(/^\d+$/);
    const reply = page.json.items.find((m: { role: string }) => m.role === "owner");
    expect(reply).toMatchObject({ status: "working" });
    expect(reply.content.length).toBeGreaterThan(0);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events?after=${n}`, w.token);
    await settle(room(c.id), clock);
    const done = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    expect(s.events[0]!.type).not.toBe("snapshot");
    expect(s.events.every((e) => e.id > Number(n))).toBe(true);
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === reply.id).map((e) => e.data.text);
    expect(reply.content + deltas.join("")).toBe(done.data.content);
    await s.close();
  });

  it("is on the chat and the queue too, and is the newest event id", async () => {
    const w = await world();
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    const snapshot = await s.next();
    await s.close();
    for (const path of ["", "/queue", "/messages"]) {
      const r = await call("GET", `${chatsPath(w)}/${c.id}${path}`, { token: w.token });
      expect(r.headers.get("chat-event-id"), path).toBe(String(snapshot.id));
    }
  });
});

describe("creating a chat with an idempotency-key", () => {
  const create = (w: Awaited<ReturnType<typeof world>>, title: string, key?: string) =>
    call("POST", chatsPath(w), { token: w.token, body: { title }, headers: key ? { "idempotency-key": key } : {} });

  it("answers a retry with the first answer, refuses the key with another title, and makes one chat", async () => {
    const w = await world();
    const key = crypto.randomUUID();
    const first = await create(w, "only once", key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    // Renamed since: the replay is the chat as first created.
    await call("PATCH", `${chatsPath(w)}/${first.json.id}`, { token: w.token, body: { title: "renamed" } });
    const again = await create(w, "only once", key.toUpperCase());
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expectProblem(await create(w, "another title", key), 409, "idempotency_key_reused");
    expectProblem(await create(w, "x", "not-a-uuid"), 400, "invalid_request");
    expect((await create(w, "no key")).status).toBe(201);
    // The key is the project's: another project may use it for its own chat.
    const other = await world();
    expect((await create(other, "only once", key)).json.id).not.toBe(first.json.id);
    const list = (await call("GET", chatsPath(w), { token: w.token })).json.items;
    expect(list.map((x: { title: string }) => x.title).sort()).toEqual(["no key", "renamed"]);
  });

  it("makes one chat for concurrent creations with one key", async () => {
    const w = await world();
    const key = crypto.randomUUID();
    const burst = await Promise.all(Array.from({ length: 5 }, () => create(w, "concurrent", key)));
    expect(burst.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(burst.map((r) => r.json.id)).size).toBe(1);
    expect((await call("GET", chatsPath(w), { token: w.token })).json.items).toHaveLength(1);
  });

  it("forgets a key after 24 hours", async () => {
    const w = await world();
    const key = crypto.randomUUID();
    const clock = frozenClock();
    const first = await create(w, "day one", key);
    clock.advance(24 * 3600_000 + 1);
    const later = await create(w, "day one", key);
    expect(later.headers.get("idempotency-replayed")).toBeNull();
    expect(later.json.id).not.toBe(first.json.id);
  });
});
