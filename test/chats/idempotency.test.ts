import { describe, expect, it } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, creditsOf, expectProblem, historyOf, newChat, replies, room, send, world } from "../helpers";

describe("idempotency keys", () => {
  it("keeps one submission for 25 parallel retries with one key", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 25 }, () => send(w, c.id, "only once", key)));
    expect(results.map((r) => r.status)).toEqual(Array(25).fill(202));
    expect(new Set(results.map((r) => r.json.submissionId)).size).toBe(1);
    expect(new Set(results.map((r) => r.json.disposition))).toEqual(new Set(["started"]));
    expect(results.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(24);
    await settle(room(c.id), clock);
    const page = await historyOf(w, c.id);
    expect(replies(page)).toHaveLength(1);
    expect(page.items.filter((m) => m.role === "user")).toHaveLength(1);
    const again = await send(w, c.id, "only once", key);
    expect(again.json).toEqual(results[0]!.json);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it("rejects a reused key with a changed content or reply target with 409", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    expect((await send(w, c.id, "original", key)).status).toBe(202);
    expectProblem(await send(w, c.id, "changed", key), 409, "idempotency_key_reused");
    await runNextAlarm(room(c.id), clock); // writes the user message, a reply target
    const page = await historyOf(w, c.id);
    expect(page.items.at(-1)).toMatchObject({ role: "user", content: "original" });
    expectProblem(await send(w, c.id, "original", key, { replyToMessageId: page.items.at(-1)!.id }), 409, "idempotency_key_reused");
  });

  it("remembers keys per chat: the same key in another chat is a new message", async () => {
    const w = await world();
    const a = await newChat(w);
    const b = await newChat(w);
    const key = crypto.randomUUID();
    const first = await send(w, a.id, "hi", key);
    const second = await send(w, b.id, "hi", key);
    expect(second.status).toBe(202);
    expect(second.headers.get("idempotency-replayed")).toBeNull();
    expect(second.json.submissionId).not.toBe(first.json.submissionId);
  });

  it("requires an idempotency-key that is a UUID", async () => {
    const w = await world();
    const c = await newChat(w);
    const path = `${chatsPath(w)}/${c.id}/messages`;
    expectProblem(await call("POST", path, { token: w.token, body: { content: "x" } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": "abc" }, body: { content: "x" } }), 400, "invalid_request");
  });

  it("replays an answer given before the chat was archived", async () => {
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    const first = await send(w, c.id, "before", key);
    expect((await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await send(w, c.id, "after"), 409, "chat_archived");
    const replayed = await send(w, c.id, "before", key);
    expect(replayed.status).toBe(202);
    expect(replayed.json).toEqual(first.json);
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
  });
});
