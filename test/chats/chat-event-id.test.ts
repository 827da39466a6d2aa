import { describe, expect, it } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, newChat, room, send, world } from "../helpers";
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
