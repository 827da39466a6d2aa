import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MessagePage, Queue, Submission } from "../../src/chats/schemas";
import { admin, call, chatsPath, creditsOf, env, eventually, expectProblem, newChat, peek, send, world, type World } from "../helpers";

const history = async (w: World, chatId: string, query = "?limit=100") =>
  MessagePage.parse((await call("GET", `${chatsPath(w)}/${chatId}/messages${query}`, { token: w.token })).json);
const queue = async (w: World, chatId: string) => Queue.parse((await call("GET", `${chatsPath(w)}/${chatId}/queue`, { token: w.token })).json);
const chat = async (w: World, chatId: string) => (await call("GET", `${chatsPath(w)}/${chatId}`, { token: w.token })).json;
const replies = (page: { items: { role: string; status: string | null }[] }) => page.items.filter((m) => m.role === "owner" && m.status === "success");

describe("sending a message", () => {
  it("accepts with 202 started, and the agent's reply follows in the history", async () => {
    const w = await world();
    const c = await newChat(w);
    const r = await send(w, c.id, "Build me a landing page");
    expect(r.status).toBe(202);
    expect(Submission.parse(r.json)).toMatchObject({ chatId: c.id, disposition: "started" });
    const page = await eventually("the reply", async () => {
      const p = await history(w, c.id);
      return replies(p).length === 1 && p;
    });
    const [reply, user] = page.items;
    expect(user).toMatchObject({ role: "user", content: "Build me a landing page", status: null, taskId: null });
    expect(reply).toMatchObject({ role: "owner", status: "success", taskId: expect.any(String) });
    expect(reply!.content).toContain("Build me a landing page");
    const summary = await eventually("the summary", async () => {
      const x = await chat(w, c.id);
      return !x.isWorking && x;
    });
    expect(summary.latestAgentPreview).toBe(reply!.content.slice(0, 500));
    expect(summary.lastMessageAt).toBe(reply!.createdAt);
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await queue(w, c.id)).items).toEqual([]);
  });

  it("queues the next message while the agent works and runs them in order", async () => {
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "one");
    const second = await send(w, c.id, "two");
    const third = await send(w, c.id, "three");
    expect(second.json.disposition).toBe("queued");
    const q = await queue(w, c.id);
    expect(q.items.map((e) => e.content)).toEqual(expect.arrayContaining(["two", "three"]));
    expect(q.items.find((e) => e.id === second.json.submissionId)).toMatchObject({ status: "queued", createdAt: expect.stringMatching(/Z$/) });
    const summary = await chat(w, c.id);
    expect(summary.isWorking).toBe(true);
    expect(summary.queuedCount).toBeGreaterThanOrEqual(1);
    const page = await eventually("three replies", async () => {
      const p = await history(w, c.id);
      return replies(p).length === 3 && p;
    });
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["three", "two", "one"]);
    expect((await queue(w, c.id)).items).toEqual([]);
    expect(third.json.disposition).toBe("queued");
  });

  it("keeps one submission for 25 parallel retries with one key", async () => {
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    const results = await Promise.all(Array.from({ length: 25 }, () => send(w, c.id, "only once", key)));
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(new Set(results.map((r) => r.json.submissionId)).size).toBe(1);
    expect(new Set(results.map((r) => r.json.disposition)).size).toBe(1);
    expect(results.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(24);
    await eventually("the reply", async () => replies(await history(w, c.id)).length === 1);
    expect((await history(w, c.id)).items.filter((m) => m.role === "user")).toHaveLength(1);
    const again = await send(w, c.id, "only once", key);
    expect(again.json).toEqual(results[0]!.json);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it("rejects a reused key with a changed content or reply target with 409", async () => {
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    expect((await send(w, c.id, "original", key)).status).toBe(202);
    expectProblem(await send(w, c.id, "changed", key), 409, "idempotency_key_reused");
    const page = await eventually("a message", async () => {
      const p = await history(w, c.id);
      return p.items.length > 0 && p;
    });
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
    expect(second.json.submissionId).not.toBe(first.json.submissionId);
  });

  it("requires an idempotency-key that is a UUID", async () => {
    const w = await world();
    const c = await newChat(w);
    const path = `${chatsPath(w)}/${c.id}/messages`;
    expectProblem(await call("POST", path, { token: w.token, body: { content: "x" } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": "abc" }, body: { content: "x" } }), 400);
  });

  it.each([
    ["no content", {}],
    ["empty content", { content: "" }],
    ["100001 characters", { content: "x".repeat(100_001) }],
    ["a number", { content: 1 }],
    ["a model", { content: "x", model: "gpt" }],
    ["attachments", { content: "x", attachments: [] }],
    ["a non-UUID reply target", { content: "x", replyToMessageId: "nope" }],
  ])("rejects a body with %s with 400", async (_, body) => {
    const w = await world();
    const c = await newChat(w);
    const r = await call("POST", `${chatsPath(w)}/${c.id}/messages`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body });
    expectProblem(r, 400, "invalid_request");
  });

  it("accepts exactly 100000 characters", async () => {
    const w = await world();
    const c = await newChat(w);
    expect((await send(w, c.id, "я".repeat(100_000))).status).toBe(202);
  });

  it("requires replyToMessageId to name a message of this chat", async () => {
    const w = await world();
    const a = await newChat(w);
    const b = await newChat(w);
    await send(w, a.id, "first");
    const page = await eventually("a message", async () => {
      const p = await history(w, a.id);
      return p.items.length > 0 && p;
    });
    expectProblem(await send(w, a.id, "x", crypto.randomUUID(), { replyToMessageId: crypto.randomUUID() }), 400);
    expectProblem(await send(w, b.id, "x", crypto.randomUUID(), { replyToMessageId: page.items[0]!.id }), 400);
    expect((await send(w, a.id, "reply", crypto.randomUUID(), { replyToMessageId: page.items[0]!.id })).status).toBe(202);
  });

  it("refuses sending to an archived chat with 409, but replays an earlier answer", async () => {
    const w = await world();
    const c = await newChat(w);
    const key = crypto.randomUUID();
    const first = await send(w, c.id, "before", key);
    await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token });
    expectProblem(await send(w, c.id, "after"), 409, "chat_archived");
    expect((await send(w, c.id, "before", key)).json).toEqual(first.json);
  });
});

describe("history", () => {
  it("pages newest first with a cursor, stable while new messages arrive", async () => {
    const w = await world();
    const c = await newChat(w);
    for (let i = 0; i < 4; i++) await send(w, c.id, `m${i}`);
    await eventually("four replies", async () => replies(await history(w, c.id)).length === 4);
    const seen: string[] = [];
    let page = await history(w, c.id, "?limit=3");
    seen.push(...page.items.map((m) => m.id));
    await send(w, c.id, "arrives while paging");
    while (page.nextCursor) {
      page = await history(w, c.id, `?limit=3&cursor=${encodeURIComponent(page.nextCursor)}`);
      seen.push(...page.items.map((m) => m.id));
    }
    expect(seen).toHaveLength(8);
    expect(new Set(seen).size).toBe(8);
    const all = await eventually("the fifth reply", async () => {
      const p = await history(w, c.id);
      return replies(p).length === 5 && p;
    });
    expect(all.items.slice(2).map((m) => m.id)).toEqual(seen);
  });

  it("defaults to 50 per page and bounds limit to 1..100", async () => {
    const w = await world();
    const c = await newChat(w);
    const base = `${chatsPath(w)}/${c.id}/messages`;
    expect((await call("GET", base, { token: w.token })).json).toEqual({ items: [], nextCursor: null });
    for (const q of ["?limit=0", "?limit=101", "?limit=abc", "?limit=1.5", "?cursor=", "?other=1"]) {
      expectProblem(await call("GET", `${base}${q}`, { token: w.token }), 400);
    }
  });

  it("rejects malformed cursors and cursors of another chat with 400", async () => {
    const w = await world();
    const a = await newChat(w);
    const b = await newChat(w);
    for (let i = 0; i < 2; i++) await send(w, a.id, `m${i}`);
    await eventually("two replies", async () => replies(await history(w, a.id)).length === 2);
    const { nextCursor } = await history(w, a.id, "?limit=1");
    expect(nextCursor).toBeTruthy();
    for (const cursor of ["garbage!", "bm9wZQ", btoa(`${a.id}:0`), nextCursor!.slice(0, -2)]) {
      expectProblem(await call("GET", `${chatsPath(w)}/${a.id}/messages?cursor=${encodeURIComponent(cursor)}`, { token: w.token }), 400);
    }
    expectProblem(await call("GET", `${chatsPath(w)}/${b.id}/messages?cursor=${nextCursor}`, { token: w.token }), 400);
  });
});

describe("credits", () => {
  it("fails the task visibly when the owner has no credits, and takes nothing", async () => {
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const r = await send(w, c.id, "please");
    expect(r.status).toBe(202);
    const q = await eventually("a failed entry", async () => {
      const x = await queue(w, c.id);
      return x.items[0]?.status === "failed" && x;
    });
    expect(q.items[0]).toMatchObject({ id: r.json.submissionId, content: "please" });
    const page = await history(w, c.id);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ role: "error", taskId: expect.any(String) });
    expect(await creditsOf(w.account.id)).toBe(0);
    expect((await chat(w, c.id)).isWorking).toBe(false);
  });

  it("never lets the balance go negative across chats", async () => {
    const w = await world({ credits: 2 });
    const chats = await Promise.all([newChat(w), newChat(w), newChat(w), newChat(w)]);
    await Promise.all(chats.map((c) => send(w, c.id, "go")));
    await eventually("all four settled", async () => {
      const states = await Promise.all(chats.map(async (c) => (await history(w, c.id)).items.some((m) => m.role === "error" || (m.role === "owner" && m.status === "success"))));
      return states.every(Boolean);
    });
    const outcomes = await Promise.all(chats.map(async (c) => (await history(w, c.id)).items.some((m) => m.role === "error")));
    expect(outcomes.filter(Boolean)).toHaveLength(2);
    expect(await creditsOf(w.account.id)).toBe(0);
  });
});

describe("maintenance", () => {
  it("accepts submissions as queued and runs them in order once it ends", async () => {
    const w = await world();
    const c = await newChat(w);
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).json).toEqual({ enabled: true });
    try {
      const first = await send(w, c.id, "during one");
      const second = await send(w, c.id, "during two");
      expect([first.json.disposition, second.json.disposition]).toEqual(["queued", "queued"]);
      await new Promise((r) => setTimeout(r, 300));
      expect((await queue(w, c.id)).items.map((e) => [e.content, e.status])).toEqual([
        ["during one", "queued"],
        ["during two", "queued"],
      ]);
      expect((await history(w, c.id)).items).toEqual([]);
    } finally {
      expect((await admin("PUT", "/admin/maintenance", { enabled: false })).status).toBe(200);
    }
    const items = await eventually(
      "both replies",
      async () => {
        const p = await peek(w, c.id);
        return replies({ items: p }).length === 2 && p;
      },
      10_000,
    );
    expect(items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["during two", "during one"]);
  });
});

describe("eviction", () => {
  it("loses nothing and finishes the task when the object is evicted mid-task", async () => {
    const w = await world();
    const c = await newChat(w);
    const stub = env.CHAT_ROOM.getByName(c.id);
    await send(w, c.id, "survive");
    await send(w, c.id, "and me");
    await evictDurableObject(stub);
    const page = await eventually("both replies", async () => {
      const p = await history(w, c.id);
      return replies(p).length === 2 && p;
    });
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["and me", "survive"]);
    expect((await chat(w, c.id)).isWorking).toBe(false);
  });

  it("finishes a task whose object was evicted between its steps, from the alarm", async () => {
    const w = await world();
    const c = await newChat(w);
    const stub = env.CHAT_ROOM.getByName(c.id);
    await send(w, c.id, "step by step");
    for (let i = 0; i < 20; i++) {
      await evictDurableObject(stub).catch(() => undefined);
      await runDurableObjectAlarm(stub);
      if (replies(await history(w, c.id)).length === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(replies(await history(w, c.id))).toHaveLength(1);
    expect((await chat(w, c.id)).isWorking).toBe(false);
    expect(await creditsOf(w.account.id)).toBe(999);
  });
});

describe("the chat list index", () => {
  it("follows the chat: preview, working state and queue count", async () => {
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "index me");
    const listed = await eventually("the list to show the reply", async () => {
      const item = (await call("GET", chatsPath(w), { token: w.token })).json.items[0];
      return item.latestAgentPreview && !item.isWorking && item;
    });
    expect(listed).toEqual(await chat(w, c.id));
  });

  it("catches up after the index write failed", async () => {
    const w = await world();
    const c = await newChat(w);
    await env.DB.exec("ALTER TABLE chat_index RENAME TO chat_index_offline");
    try {
      expect((await call("PATCH", `${chatsPath(w)}/${c.id}`, { token: w.token, body: { title: "renamed while D1 failed" } })).status).toBe(200);
    } finally {
      await env.DB.exec("ALTER TABLE chat_index_offline RENAME TO chat_index");
    }
    expect((await chat(w, c.id)).title).toBe("renamed while D1 failed");
    await runDurableObjectAlarm(env.CHAT_ROOM.getByName(c.id));
    const items = (await call("GET", chatsPath(w), { token: w.token })).json.items;
    expect(items[0].title).toBe("renamed while D1 failed");
  });
});
