import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatList } from "../../src/chats/schemas";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatOf, chatsPath, env, newChat, room, send, world, type World } from "../helpers";

afterEach(() => vi.restoreAllMocks());

const list = async (w: World) => ChatList.parse((await call("GET", chatsPath(w), { token: w.token })).json).items;

describe("the chat list index", () => {
  it("follows the chat: preview, working state and queue count", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "index me");
    await send(w, c.id, "and me");
    await runNextAlarm(room(c.id), clock); // the first task starts; the second waits
    expect((await list(w))[0]).toMatchObject({ id: c.id, isWorking: true, queuedCount: 1 });
    await settle(room(c.id), clock);
    const [listed] = await list(w);
    expect(listed).toMatchObject({ id: c.id, isWorking: false, queuedCount: 0 });
    expect(listed!.latestAgentPreview).toContain("and me");
    expect(listed).toEqual(await chatOf(w, c.id));
  });

  it("catches up after the index write failed", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await env.DB.exec("ALTER TABLE chat_index RENAME TO chat_index_offline");
    try {
      expect((await call("PATCH", `${chatsPath(w)}/${c.id}`, { token: w.token, body: { title: "renamed while D1 failed" } })).status).toBe(200);
    } finally {
      await env.DB.exec("ALTER TABLE chat_index_offline RENAME TO chat_index");
    }
    expect((await chatOf(w, c.id)).title).toBe("renamed while D1 failed");
    expect((await list(w))[0]!.title).toBe("chat");
    expect(await alarmOf(room(c.id)), "a retry is scheduled").toBeGreaterThan(clock.now());
    expect(await settle(room(c.id), clock)).toBe(1);
    expect((await list(w))[0]!.title).toBe("renamed while D1 failed");
  });
});
