import { runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { runNextAlarm, settle } from "../clock";
import { call, chatsPath, expectProblem, historyOf, inDays, newChat, newToken, room, send, type World, world } from "../helpers";
import { it } from "../fixtures/chat";
import { FORK_LIMITS } from "../../src/chats/limits";

const fork = (w: World, chatId: string, body: Record<string, unknown>, key: string = crypto.randomUUID(), token = w.token) =>
  call("POST", `${chatsPath(w)}/${chatId}/fork`, { token, headers: { "idempotency-key": key }, body });
const oldestFirst = async (w: World, chatId: string) => (await historyOf(w, chatId)).items.slice().reverse();
const chatCount = async (w: World) => (await call("GET", chatsPath(w), { token: w.token })).json.items.length as number;

/** A chat of w with one ended exchange per text. */
async function exchanged(w: World, clock: Parameters<typeof settle>[1], texts: string[], title = "source") {
  const chat = await newChat(w, title);
  for (const text of texts) {
    expect((await send(w, chat.id, text)).status).toBe(202);
    await settle(room(chat.id), clock);
  }
  return { chat, messages: await oldestFirst(w, chat.id) };
}

describe("forking a chat", () => {
  it("copies the history up to atMessageId with new ids and nothing of the source's work; the agent's next task there sees exactly the copies", async ({ clock, w }) => {
    const { chat, messages } = await exchanged(w, clock, ["first question", "second question"]);
    const forked = await fork(w, chat.id, { atMessageId: messages[1]!.id });
    expect(forked.status, forked.text).toBe(201);
    expect(forked.headers.get("location")).toBe(`${chatsPath(w)}/${forked.json.chat.id}`);
    const { chat: copy } = forked.json;
    expect(copy).toMatchObject({ title: "source (fork)", forkedFrom: { chatId: chat.id, messageId: messages[1]!.id }, isWorking: false, queuedCount: 0 });
    const copies = await oldestFirst(w, copy.id);
    expect(copies.map((m) => [m.role, m.content, m.status, m.createdAt])).toEqual(messages.slice(0, 2).map((m) => [m.role, m.content, m.status, m.createdAt]));
    for (const m of copies) expect(m).toMatchObject({ taskId: null, submissionId: null, usage: null, questionId: null });
    expect(copies.every((m) => !messages.some((s) => s.id === m.id))).toBe(true);
    // Nothing of the source's queue, keys or usage: a send there under the source's first key is a new submission.
    expect((await call("GET", `${chatsPath(w)}/${copy.id}/queue`, { token: w.token })).json.items).toEqual([]);
    const sent = await send(w, copy.id, "another direction");
    expect(sent.status).toBe(202);
    expect(sent.json.disposition).toBe("started");
    await settle(room(copy.id), clock);
    const turns = await runInDurableObject(room(copy.id), (object) => object.earlierTurnsOfLastTask());
    expect(turns).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: messages[1]!.content },
    ]);
    // The source is as it was.
    expect(await oldestFirst(w, chat.id)).toEqual(messages);
  });

  it("rerun sends the user message's text to a fork of what came before it: queued, run and charged as any send", async ({ clock, w }) => {
    const { chat, messages } = await exchanged(w, clock, ["what is the plan?"]);
    const forked = await fork(w, chat.id, { atMessageId: messages[0]!.id, rerun: true });
    expect(forked.status, forked.text).toBe(201);
    const { chat: copy, submissionId } = forked.json;
    expect(copy.queuedCount + Number(copy.isWorking)).toBe(1);
    await settle(room(copy.id), clock);
    const after = await oldestFirst(w, copy.id);
    expect(after.map((m) => [m.role, m.content.startsWith("Done.") ? "reply" : m.content, m.submissionId])).toEqual([
      ["user", "what is the plan?", submissionId],
      ["owner", "reply", submissionId],
    ]);
    expect(after[1]!.usage?.credits).toBe(1);
    expect(await oldestFirst(w, chat.id)).toEqual(messages);
  });

  it("refuses what the contract refuses, each with its status and code, and makes nothing", async ({ clock, w }) => {
    const { chat, messages } = await exchanged(w, clock, ["a question"]);
    const [user, reply] = messages;
    expectProblem(await fork(w, chat.id, { atMessageId: crypto.randomUUID() }), 400, "invalid_request");
    expectProblem(await fork(w, chat.id, { atMessageId: reply!.id, rerun: true }), 400, "invalid_request");
    expectProblem(await fork(w, chat.id, { atMessageId: user!.id, extra: 1 }), 400, "invalid_request");
    expectProblem(await call("POST", `${chatsPath(w)}/${chat.id}/fork`, { token: w.token, body: { atMessageId: user!.id } }), 400, "invalid_request");
    expectProblem(await fork(w, crypto.randomUUID(), { atMessageId: user!.id }), 404, "not_found");
    const key = crypto.randomUUID();
    expect((await fork(w, chat.id, { atMessageId: user!.id }, key)).status).toBe(201);
    expectProblem(await fork(w, chat.id, { atMessageId: reply!.id }, key), 409, "idempotency_key_reused");
    const reader = await newToken(w.session, ["chat:read"]);
    expectProblem(await fork(w, chat.id, { atMessageId: user!.id }, crypto.randomUUID(), reader), 403, "insufficient_scope");
    const stranger = await world();
    expectProblem(
      await call("POST", `/v1/projects/${w.projectId}/chats/${chat.id}/fork`, {
        token: stranger.token,
        headers: { "idempotency-key": crypto.randomUUID() },
        body: { atMessageId: user!.id },
      }),
      404,
    );
    expect(await chatCount(w)).toBe(2);
  });

  it("a reply still working is 409 message_working; its user message may be forked", async ({ clock, w, chat }) => {
    expect((await send(w, chat.id, "working on it")).status).toBe(202);
    // The first alarm starts the task: its reply is written working.
    await runNextAlarm(room(chat.id), clock);
    const [user, reply] = await oldestFirst(w, chat.id);
    expect(reply?.status).toBe("working");
    expectProblem(await fork(w, chat.id, { atMessageId: reply!.id }), 409, "message_working");
    expect((await fork(w, chat.id, { atMessageId: user!.id })).status).toBe(201);
  });

  it("a history over the bound is 409 fork_too_long and nothing is made", async ({ w, chat }) => {
    // A long history written straight into the chat's object: FORK_LIMITS.messages + 1 short user messages.
    const last = await runInDurableObject(room(chat.id), (_object, state) => {
      let id = "";
      for (let i = 0; i <= FORK_LIMITS.messages; i++) {
        id = crypto.randomUUID();
        state.storage.sql.exec("INSERT INTO messages (id, role, content, created_at) VALUES (?, 'user', ?, ?)", id, `m${i}`, new Date().toISOString());
      }
      return id;
    });
    expectProblem(await fork(w, chat.id, { atMessageId: last }), 409, "fork_too_long");
    expect(await chatCount(w)).toBe(1);
  });

  it("copies a long history in batches, each copied once, also when five requests with one key drive it at once", async ({ w, chat }) => {
    const count = FORK_LIMITS.batchMessages * 2 + 50;
    const last = await runInDurableObject(room(chat.id), (_object, state) => {
      let id = "";
      for (let i = 0; i < count; i++) {
        id = crypto.randomUUID();
        state.storage.sql.exec("INSERT INTO messages (id, role, content, created_at) VALUES (?, 'user', ?, ?)", id, `m${i}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString());
      }
      return id;
    });
    const key = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => fork(w, chat.id, { atMessageId: last }, key)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.json.chat.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotency-replayed") === "true")).toHaveLength(4);
    const forkId = answers[0]!.json.chat.id as string;
    const contents = await runInDurableObject(room(forkId), (_object, state) =>
      state.storage.sql
        .exec<{ content: string }>("SELECT content FROM messages ORDER BY seq")
        .toArray()
        .map((r) => r.content),
    );
    expect(contents).toEqual(Array.from({ length: count }, (_, i) => `m${i}`));
  });

  it("a rerun at the token's credit limit is 403 token_credit_limit, makes nothing and leaves the key free; a fork without rerun is made", async ({ clock, w }) => {
    const { chat, messages } = await exchanged(w, clock, ["one task"]);
    const limited = await call("POST", "/auth/api-tokens", {
      token: w.session,
      body: { name: "limited", scopes: ["chat:read", "chat:write"], expiresAt: inDays(30), creditLimit: 1 },
    });
    const token = limited.json.token as string;
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "spend it" } })).status).toBe(
      202,
    );
    await settle(room(chat.id), clock);
    const key = crypto.randomUUID();
    expectProblem(await fork(w, chat.id, { atMessageId: messages[0]!.id, rerun: true }, key, token), 403, "token_credit_limit");
    expect(await chatCount(w)).toBe(1);
    const plain = await fork(w, chat.id, { atMessageId: messages[0]!.id, rerun: true }, key);
    expect(plain.status, plain.text).toBe(201);
    expect(plain.headers.get("idempotency-replayed")).toBeNull();
  });
});
