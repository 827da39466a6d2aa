import { describe, expect, it } from "vitest";
import { Chat, Message } from "../../src/chats/schemas";
import { call, chatsPath, newChat, send, world } from "../helpers";
import { openEvents, type StreamEvent } from "../sse";

const eventsPath = (w: { projectId: string }, chatId: string) => `${chatsPath(w)}/${chatId}/events`;
const isFinalReply = (e: StreamEvent) => e.type === "message" && e.data.role === "owner" && e.data.status !== "working";

describe("following a chat", () => {
  it("starts with a snapshot and follows a message to the reply's final message", async () => {
    const w = await world();
    const c = await newChat(w);
    const s = await openEvents(eventsPath(w, c.id), w.token);
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(s.headers.get("cache-control")).toBe("no-store");
    const snapshot = await s.next();
    expect(snapshot.type).toBe("snapshot");
    expect(Chat.parse(snapshot.data.chat)).toMatchObject({ id: c.id, isWorking: false });
    expect(snapshot.data.queue).toEqual({ items: [] });

    expect((await send(w, c.id, "follow me")).status).toBe(202);
    const final = await s.until(isFinalReply);
    expect(Message.parse(final.data)).toMatchObject({ status: "success" });
    await s.until((e) => e.type === "chat" && e.data.isWorking === false && e.id > final.id);

    const ids = s.events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids.slice(1)).size).toBe(ids.length - 1);
    expect(s.events.find((e) => e.type === "message" && e.data.role === "user")!.data.content).toBe("follow me");
    const history = (await call("GET", `${chatsPath(w)}/${c.id}/messages`, { token: w.token })).json.items;
    expect(history.find((m: { id: string }) => m.id === final.data.id)).toEqual(final.data);
    await s.close();
  });
});
