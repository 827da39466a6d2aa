import { describe, expect } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, creditsOf, expectProblem, historyOf, newChat, replies, room, send, world, type World } from "../helpers";
import { it } from "../fixtures/chat";

describe("idempotency keys", () => {
  it("keeps one submission for 25 parallel retries with one key", async ({ clock, w, chat }) => {
    const key = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 25 }, () => send(w, chat.id, "only once", key)));
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(202));
    expect(new Set(results.map((r) => r.json.submissionId)).size).toBe(1);
    expect(new Set(results.map((r) => r.json.disposition))).toEqual(new Set(["started"]));
    expect(results.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(24);
    await settle(room(chat.id), clock);
    const page = await historyOf(w, chat.id);
    expect(replies(page)).toHaveLength(1);
    expect(page.items.filter((m) => m.role === "user")).toHaveLength(1);
    const again = await send(w, chat.id, "only once", key);
    expect(again.json).toEqual(results[0]!.json);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it("rejects a reused key with a changed content or reply target with 409", async ({ clock, w, chat }) => {
    const key = crypto.randomUUID();
    expect((await send(w, chat.id, "original", key)).status).toBe(202);
    expectProblem(await send(w, chat.id, "changed", key), 409, "idempotency_key_reused");
    await runNextAlarm(room(chat.id), clock); // writes the user message, a reply target
    const page = await historyOf(w, chat.id);
    expect(page.items.at(-1)).toMatchObject({ role: "user", content: "original" });
    expectProblem(await send(w, chat.id, "original", key, { replyToMessageId: page.items.at(-1)!.id }), 409, "idempotency_key_reused");
  });

  it("remembers keys per chat: the same key in another chat is a new message", async ({ w }) => {
    const a = await newChat(w);
    const b = await newChat(w);
    const key = crypto.randomUUID();
    const first = await send(w, a.id, "hi", key);
    const second = await send(w, b.id, "hi", key);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotency-replayed")).toBeNull();
    expect(second.json.submissionId).not.toBe(first.json.submissionId);
  });

  it("requires an idempotency-key that is a UUID, and says which of the two is wrong", async ({ w, chat }) => {
    const path = `${chatsPath(w)}/${chat.id}/messages`;
    const missing = await call("POST", path, { token: w.token, body: { content: "x" } });
    expectProblem(missing, 400, "invalid_request");
    expect(missing.json.detail).toBe("The request headers are invalid.");
    expect(missing.json.errors).toEqual([{ path: "idempotency-key", message: "required: a UUID, one per intended message" }]);
    const notUuid = await call("POST", path, { token: w.token, headers: { "idempotency-key": "abc" }, body: { content: "x" } });
    expectProblem(notUuid, 400, "invalid_request");
    expect(notUuid.json.errors).toEqual([{ path: "idempotency-key", message: "must be a UUID, one per intended message" }]);
  });

  it("replays an answer given before the chat was archived", async ({ w, chat }) => {
    const key = crypto.randomUUID();
    const first = await send(w, chat.id, "before", key);
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await send(w, chat.id, "after"), 409, "chat_archived");
    const replayed = await send(w, chat.id, "before", key);
    expect(replayed.status).toBe(202);
    expect(replayed.json).toEqual(first.json);
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
  });
});

describe("creating a chat with an idempotency-key", () => {
  const create = (w: World, title: string, key?: string) => call("POST", chatsPath(w), { token: w.token, body: { title }, headers: key ? { "idempotency-key": key } : {} });

  it("answers a retry with the first answer, refuses the key with another title, and makes one chat", async ({ w }) => {
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

  it("makes one chat for concurrent creations with one key", async ({ w }) => {
    const key = crypto.randomUUID();
    const burst = await Promise.all(Array.from({ length: 5 }, () => create(w, "concurrent", key)));
    expect(burst.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(burst.map((r) => r.json.id)).size).toBe(1);
    expect((await call("GET", chatsPath(w), { token: w.token })).json.items).toHaveLength(1);
  });

  it("forgets a key after 24 hours", async ({ w }) => {
    const key = crypto.randomUUID();
    const clock = frozenClock();
    const first = await create(w, "day one", key);
    clock.advance(24 * 3600_000 + 1);
    const later = await create(w, "day one", key);
    expect(later.headers.get("idempotency-replayed")).toBeNull();
    expect(later.json.id).not.toBe(first.json.id);
  });
});
