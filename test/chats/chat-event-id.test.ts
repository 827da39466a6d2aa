import { describe, expect } from "vitest";
import { runNextAlarm, settle } from "../clock";
import { call, chatsPath, room, send } from "../helpers";
import { openEvents } from "../sse";
import { it } from "../fixtures/chat";

describe("Chat-Event-Id: joining a chat with history, exactly", () => {
  it("a page read mid-reply and the stream after its id rebuild the reply with nothing missed or repeated", async ({ clock, w, chat }) => {
    await send(w, chat.id, "join me mid-reply");
    await runNextAlarm(room(chat.id), clock); // dispatched: the reply is working
    await runNextAlarm(room(chat.id), clock); // its first part
    const page = await call("GET", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token });
    const n = page.headers.get("chat-event-id");
    expect(n).toMatch(/^\d+$/);
    const reply = page.json.items.find((m: { role: string }) => m.role === "owner");
    expect(reply).toMatchObject({ status: "working" });
    expect(reply.content.length).toBeGreaterThan(0);
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events?after=${n}`, w.token);
    await settle(room(chat.id), clock);
    const done = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    expect(s.events[0]!.type).not.toBe("snapshot");
    expect(s.events.every((e) => e.id > Number(n))).toBe(true);
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === reply.id).map((e) => e.data.text);
    expect(reply.content + deltas.join("")).toBe(done.data.content);
    await s.close();
  });

  it("is on the chat and the queue too, and is the newest event id", async ({ w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    const snapshot = await s.next();
    await s.close();
    for (const path of ["", "/queue", "/messages"]) {
      const r = await call("GET", `${chatsPath(w)}/${chat.id}${path}`, { token: w.token });
      expect(r.headers.get("chat-event-id"), path).toBe(String(snapshot.id));
    }
  });
});
