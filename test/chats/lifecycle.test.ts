import { describe, expect } from "vitest";
import { Chat, ChatList } from "../../src/chats/schemas";
import { frozenClock } from "../clock";
import { call, chatsPath, expectProblem, newChat, world, type World } from "../helpers";
import { it } from "../fixtures/chat";

const listed = async (w: World, query = "") => ChatList.parse((await call("GET", `${chatsPath(w)}${query}`, { token: w.token })).json).items.map((x) => x.id);

describe("creating, reading and renaming a chat", () => {
  it("creates an empty chat, reads and renames it", async ({ clock, w }) => {
    const created = await call("POST", chatsPath(w), { token: w.token, body: { title: "First" } });
    expect(created.status).toBe(201);
    const chat = Chat.parse(created.json);
    expect(chat).toMatchObject({ title: "First", archivedAt: null, lastMessageAt: null, latestAgentPreview: "", isWorking: false, queuedCount: 0, isAwaitingUser: false });
    expect(Chat.parse((await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token })).json)).toEqual(chat);
    clock.advance(1000);
    const renamed = Chat.parse((await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "Renamed" } })).json);
    expect(renamed).toEqual({ ...chat, title: "Renamed", updatedAt: new Date(clock.now()).toISOString() });
    expect((await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token })).json.title).toBe("Renamed");
  });

  it.each([[{}], [{ title: "" }], [{ title: "x".repeat(161) }], [{ title: 5 }], [{ title: null }], [{ title: "ok", extra: 1 }]])(
    "rejects the title body %j with 400",
    async (body) => {
      const w = await world();
      expectProblem(await call("POST", chatsPath(w), { token: w.token, body }), 400, "invalid_request");
    },
  );

  it("counts title length in characters, so 160 emoji fit", async ({ w }) => {
    expect((await call("POST", chatsPath(w), { token: w.token, body: { title: "😀".repeat(160) } })).status).toBe(201);
    expectProblem(await call("POST", chatsPath(w), { token: w.token, body: { title: "😀".repeat(161) } }), 400, "invalid_request");
  });
});

describe("listing, archiving and restoring", () => {
  it("lists active chats newest first, archived ones with archived=true", async () => {
    // A second between changes: chats updated in the same millisecond would tie.
    const clock = frozenClock();
    const w = await world();
    const a = await newChat(w, "A");
    clock.advance(1000);
    const b = await newChat(w, "B");
    clock.advance(1000);
    const c = await newChat(w, "C");
    clock.advance(1000);
    await call("PATCH", `${chatsPath(w)}/${a.id}`, { token: w.token, body: { title: "A2" } });
    expect(await listed(w)).toEqual([a.id, c.id, b.id]);
    clock.advance(1000);
    const archived = await call("POST", `${chatsPath(w)}/${b.id}/archive`, { token: w.token });
    expect(archived.json.archivedAt).toBe(new Date(clock.now()).toISOString());
    expect(await listed(w)).toEqual([a.id, c.id]);
    expect(await listed(w, "?archived=false")).toEqual([a.id, c.id]);
    expect(await listed(w, "?archived=true")).toEqual([b.id]);
    clock.advance(1000);
    const restored = await call("POST", `${chatsPath(w)}/${b.id}/restore`, { token: w.token });
    expect(restored.json.archivedAt).toBeNull();
    expect(await listed(w)).toEqual([b.id, a.id, c.id]);
  });

  it("keeps archive and restore idempotent", async ({ clock, w, chat }) => {
    const first = await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token });
    clock.advance(1000);
    const again = await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/restore`, { token: w.token })).status).toBe(200);
    const restoredAgain = await call("POST", `${chatsPath(w)}/${chat.id}/restore`, { token: w.token });
    expect(restoredAgain.status).toBe(200);
    expect(restoredAgain.json.archivedAt).toBeNull();
  });

  it("rejects unknown list query values and parameters", async ({ w }) => {
    expectProblem(await call("GET", `${chatsPath(w)}?archived=yes`, { token: w.token }), 400, "invalid_request");
    expectProblem(await call("GET", `${chatsPath(w)}?page=2`, { token: w.token }), 400, "invalid_request");
  });
});
