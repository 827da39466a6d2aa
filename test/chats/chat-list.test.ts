import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, vi } from "vitest";
import { ProjectChats } from "../../src/chats/list/project-chats";
import { LIST_SYNC_DELAY_MS } from "../../src/chats/room/deferred-jobs";
import { ChatList, type Chat } from "../../src/chats/schemas";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { admin, call, chatOf, chatsPath, env, newChat, room, send, type World } from "../helpers";
import { it } from "../fixtures/chat";

const list = async (w: World, query = "") => ChatList.parse((await call("GET", `${chatsPath(w)}${query}`, { token: w.token })).json).items;
const listObject = (projectId: string) => env.PROJECT_CHATS.getByName(projectId);
const summary = (id: string, title: string, updatedAt: string): Chat => ({
  id,
  title,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt,
  archivedAt: null,
  lastMessageAt: null,
  latestAgentPreview: "",
  isAwaitingUser: false,
  pendingQuestionId: null,
  isWorking: false,
  queuedCount: 0,
  forkedFrom: null,
});

describe("the chat list", () => {
  it("follows the chat: preview, working state and queue count", async ({ clock, w, chat }) => {
    for (const content of ["list me", "and me", "me too"]) await send(w, chat.id, content);
    await runNextAlarm(room(chat.id), clock); // the first task starts; two wait
    // A busy chat's list lags at most LIST_SYNC_DELAY_MS: the alarm after that sends the summary as it is then.
    clock.advance(LIST_SYNC_DELAY_MS);
    await runNextAlarm(room(chat.id), clock); // the first task ends, the second starts
    const [busy] = await list(w);
    expect(busy).toMatchObject({ id: chat.id, isWorking: true, queuedCount: 1 });
    expect(busy).toEqual(await chatOf(w, chat.id));
    await settle(room(chat.id), clock);
    const [listed] = await list(w);
    expect(listed).toMatchObject({ id: chat.id, isWorking: false, queuedCount: 0 });
    expect(listed!.latestAgentPreview).toContain("me too");
    expect(listed).toEqual(await chatOf(w, chat.id));
  });

  it("hears of a busy chat once per delay, not at every dispatch; an alarm near the sync's time carries it", async ({ clock, w, chat }) => {
    const upserts = vi.spyOn(ProjectChats.prototype, "upsert");
    // Three turns, each done within a quarter of the delay: no alarm of theirs comes near the sync's time.
    for (const content of ["one", "two", "three"]) {
      await send(w, chat.id, content);
      await settle(room(chat.id), clock, 100, LIST_SYNC_DELAY_MS / 4);
    }
    expect(upserts).not.toHaveBeenCalled();
    await settle(room(chat.id), clock);
    expect(upserts).toHaveBeenCalledTimes(1);
    expect((await list(w))[0]).toEqual(await chatOf(w, chat.id));
    // Another turn, and one in the last part of the delay: its last alarm carries the sync, which wakes nothing of its own.
    await send(w, chat.id, "four");
    await settle(room(chat.id), clock, 100, LIST_SYNC_DELAY_MS / 4);
    clock.advance(LIST_SYNC_DELAY_MS * 0.6);
    await send(w, chat.id, "five");
    await settle(room(chat.id), clock, 100, LIST_SYNC_DELAY_MS / 4);
    expect(upserts).toHaveBeenCalledTimes(2);
    expect(await alarmOf(room(chat.id))).toBeNull();
    expect((await list(w))[0]).toEqual(await chatOf(w, chat.id));
  });

  it("is told by a chat restarted before every alarm", async ({ clock, w, chat }) => {
    await send(w, chat.id, "restarted");
    for (let ran = 0; ran < 20; ran++) {
      await evictDurableObject(room(chat.id));
      if (!(await runNextAlarm(room(chat.id), clock))) break;
    }
    expect(await alarmOf(room(chat.id))).toBeNull();
    const [listed] = await list(w);
    expect(listed).toMatchObject({ id: chat.id, isWorking: false, queuedCount: 0 });
    expect(listed).toEqual(await chatOf(w, chat.id));
  });

  it("hears that a started message was held back by maintenance, also after it heard of the start", async ({ clock, w, chat }) => {
    expect((await send(w, chat.id, "start me")).json.disposition).toBe("started");
    // A rename sends the summary at once: working, nothing queued.
    await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "renamed" } });
    expect((await list(w))[0]).toMatchObject({ id: chat.id, isWorking: true, queuedCount: 0 });
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).status).toBe(200);
    try {
      await runNextAlarm(room(chat.id), clock); // finds maintenance on: the message waits, queued
      const held = await chatOf(w, chat.id);
      expect(held).toMatchObject({ isWorking: false, queuedCount: 1 });
      // The list hears of it within LIST_SYNC_DELAY_MS, at the alarm that looks at maintenance again.
      expect(await alarmOf(room(chat.id))).toBeLessThanOrEqual(clock.now() + LIST_SYNC_DELAY_MS);
      await runNextAlarm(room(chat.id), clock);
      expect((await list(w))[0]).toEqual(held);
    } finally {
      expect((await admin("PUT", "/admin/maintenance", { enabled: false })).status).toBe(200);
    }
  });

  it("moves a chat between the active and archived lists, and back", async ({ w }) => {
    const [a, b] = [await newChat(w, "a"), await newChat(w, "b")];
    expect((await list(w)).map((c) => c.id)).toEqual([b.id, a.id]);
    expect((await call("POST", `${chatsPath(w)}/${a.id}/archive`, { token: w.token })).status).toBe(200);
    expect((await list(w)).map((c) => c.id)).toEqual([b.id]);
    expect((await list(w, "?archived=true")).map((c) => c.id)).toEqual([a.id]);
    expect((await call("POST", `${chatsPath(w)}/${a.id}/restore`, { token: w.token })).status).toBe(200);
    expect((await list(w, "?archived=true")).map((c) => c.id)).toEqual([]);
    expect((await list(w)).map((c) => c.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("catches up from the chat's alarm after an update could not reach the list", async ({ clock, w, chat }) => {
    vi.spyOn(ProjectChats.prototype, "upsert").mockRejectedValueOnce(new Error("Network connection lost."));
    expect((await call("PATCH", `${chatsPath(w)}/${chat.id}`, { token: w.token, body: { title: "renamed while the list was away" } })).status).toBe(200);
    expect((await chatOf(w, chat.id)).title).toBe("renamed while the list was away");
    expect((await list(w))[0]!.title).toBe("chat");
    expect(await alarmOf(room(chat.id)), "a retry is scheduled").toBeGreaterThan(clock.now());
    expect(await settle(room(chat.id), clock)).toBe(1);
    expect((await list(w))[0]!.title).toBe("renamed while the list was away");
  });
});

describe("ProjectChats", () => {
  it("gives the summaries it kept from before questions were typed a pendingQuestionId of null, once", async ({ w, chat }) => {
    await runInDurableObject(listObject(w.projectId), (_: ProjectChats, state) => {
      state.storage.sql.exec("UPDATE chats SET summary = json_remove(summary, '$.pendingQuestionId')");
      // As an object from before the schema had versions: its tables as they were then, and no version in meta.
      state.storage.sql.exec("ALTER TABLE chats DROP COLUMN switch_lease_until");
      state.storage.sql.exec("DELETE FROM meta WHERE key = 'schema'");
    });
    await evictDurableObject(listObject(w.projectId));
    // ChatList.parse refuses a summary without the field.
    expect((await list(w)).find((c) => c.id === chat.id)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
  });

  it("keeps the newer version of a summary whatever order updates arrive in, and serves each change", async ({ w }) => {
    const id = crypto.randomUUID();
    const object = listObject(w.projectId);
    await object.upsert(w.projectId, summary(id, "v2", "2026-01-02T00:00:00.000Z"), 2);
    await object.upsert(w.projectId, summary(id, "v1, late", "2026-01-01T00:00:00.000Z"), 1);
    await object.upsert(w.projectId, summary(id, "v2, retried", "2026-01-02T00:00:00.000Z"), 2);
    expect(JSON.parse(await object.list(w.projectId, false)).items.map((c: Chat) => c.title)).toEqual(["v2"]);
    await object.upsert(w.projectId, summary(id, "v3", "2026-01-03T00:00:00.000Z"), 3);
    expect(JSON.parse(await object.list(w.projectId, false)).items.map((c: Chat) => c.title)).toEqual(["v3"]);
  });

  it("ignores a late older summary that would move a chat to the other list, with both lists already served", async ({ w }) => {
    const id = crypto.randomUUID();
    const object = listObject(w.projectId);
    const titles = async (archived: boolean) => JSON.parse(await object.list(w.projectId, archived)).items.map((c: Chat) => c.title);
    await object.upsert(w.projectId, summary(id, "active v2", "2026-01-02T00:00:00.000Z"), 2);
    expect([await titles(false), await titles(true)]).toEqual([["active v2"], []]);
    await object.upsert(w.projectId, { ...summary(id, "archived v1, late", "2026-01-01T00:00:00.000Z"), archivedAt: "2026-01-01T00:00:00.000Z" }, 1);
    expect([await titles(false), await titles(true)]).toEqual([["active v2"], []]);
  });

  it("orders chats updated at the same moment by id, the same way on every read", async ({ w }) => {
    const object = listObject(w.projectId);
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    for (const id of ids) await object.upsert(w.projectId, summary(id, id, "2026-01-01T00:00:00.000Z"), 1);
    expect(JSON.parse(await object.list(w.projectId, false)).items.map((c: Chat) => c.id)).toEqual([...ids].sort().reverse());
  });

  it("lists newest updatedAt first, and an archived chat only in the archived list", async ({ w }) => {
    const object = listObject(w.projectId);
    const [old, recent, archived] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await object.upsert(w.projectId, summary(old, "old", "2026-01-01T00:00:00.000Z"), 1);
    await object.upsert(w.projectId, summary(recent, "recent", "2026-01-05T00:00:00.000Z"), 1);
    await object.upsert(w.projectId, { ...summary(archived, "archived", "2026-01-09T00:00:00.000Z"), archivedAt: "2026-01-09T00:00:00.000Z" }, 1);
    expect(JSON.parse(await object.list(w.projectId, false)).items.map((c: Chat) => c.title)).toEqual(["recent", "old"]);
    expect(JSON.parse(await object.list(w.projectId, true)).items.map((c: Chat) => c.title)).toEqual(["archived"]);
  });

  it("keeps its list through eviction", async ({ w }) => {
    await newChat(w, "kept");
    await evictDurableObject(listObject(w.projectId));
    expect((await list(w)).map((x) => x.title)).toEqual(["kept"]);
  });

  it("brings a project's D1 chat_index rows the first time it is used, keeping newer versions sent meanwhile", async () => {
    // A project from before chat lists moved: D1 has its rows and its object has never started.
    const projectId = crypto.randomUUID();
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const row = (id: string, title: string, version: number, updatedAt: string) =>
      env.DB.prepare(
        "INSERT INTO chat_index (id, project_id, title, created_at, updated_at, archived_at, last_message_at, latest_agent_preview, is_awaiting_user, is_working, queued_count, version) VALUES (?, ?, ?, ?, ?, NULL, NULL, '', 0, 0, 0, ?)",
      ).bind(id, projectId, title, "2026-01-01T00:00:00.000Z", updatedAt, version);
    await env.DB.batch([row(a, "a from D1", 4, "2026-01-02T00:00:00.000Z"), row(b, "b from D1", 7, "2026-01-03T00:00:00.000Z")]);
    const object = listObject(projectId);
    await object.upsert(projectId, summary(a, "a, newer", "2026-01-04T00:00:00.000Z"), 5);
    await object.upsert(projectId, summary(b, "b, older", "2026-01-01T00:00:00.000Z"), 6);
    expect(JSON.parse(await object.list(projectId, false)).items.map((c: Chat) => c.title)).toEqual(["a, newer", "b from D1"]);
    expect(await object.moveFromD1(projectId)).toBe("already_moved");
  });

  it("stores its list, the keys of chat creations and messages, which chat each task is in, its push config counts, the contexts A2A clients made, the task index and the project's daily usage, nothing else: a new project's object never reads D1", async ({
    w,
  }) => {
    const read = vi.spyOn(env.DB, "prepare");
    expect(await listObject(w.projectId).list(w.projectId, false)).toBe('{"items":[]}');
    expect(read).not.toHaveBeenCalled();
    const tables = await runInDurableObject(listObject(w.projectId), (_: ProjectChats, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .toArray()
        .map((r) => r.name),
    );
    // usage_*: the project's daily usage (src/credits/project-usage.ts), counted once per task id; message_keys and
    // task_chats: A2A's messageIds and the chat of each task (for a channel that names a task alone); push_counts: how
    // many A2A push configs each chat's open tasks hold (the project's limit); contexts: the chat each A2A context a
    // client made names; task_index: the project's tasks with their states (ListTasks across chats).
    expect(tables).toEqual(["chats", "contexts", "create_keys", "message_keys", "meta", "push_counts", "task_chats", "task_index", "usage_counted", "usage_days"]);
  });
});
