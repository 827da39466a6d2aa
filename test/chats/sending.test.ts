import { describe, expect } from "vitest";
import { Submission } from "../../src/chats/schemas";
import { runNextAlarm, settle } from "../clock";
import { call, chatOf, chatsPath, creditsOf, expectProblem, historyOf, newChat, queueOf, room, send, world } from "../helpers";
import { it } from "../fixtures/chat";

describe("sending a message", () => {
  it("accepts with 202 started, and the agent's reply follows in the history", async ({ clock, w, chat }) => {
    const r = await send(w, chat.id, "Build me a landing page");
    expect(r.status).toBe(202);
    expect(Submission.parse(r.json)).toMatchObject({ chatId: chat.id, disposition: "started" });
    await settle(room(chat.id), clock);
    const page = await historyOf(w, chat.id);
    expect(page.items).toHaveLength(2);
    const [reply, user] = page.items;
    // Both belong to the task and to the submission that started it.
    const ofTask = { taskId: expect.any(String), submissionId: r.json.submissionId };
    expect(user).toMatchObject({ role: "user", content: "Build me a landing page", status: null, ...ofTask });
    expect(reply).toMatchObject({ role: "owner", status: "success", ...ofTask });
    expect(user!.taskId).toBe(reply!.taskId);
    expect(reply!.content).toContain("Build me a landing page");
    const summary = await chatOf(w, chat.id);
    expect(summary.isWorking).toBe(false);
    expect(summary.latestAgentPreview).toBe(reply!.content.slice(0, 500));
    expect(summary.lastMessageAt).toBe(reply!.createdAt);
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await queueOf(w, chat.id)).items).toEqual([]);
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

  it("says where the answer's time went: Server-Timing names the gate, the project's membership and the chat's object, and the total", async ({ w, chat }) => {
    const r = await send(w, chat.id, "timed");
    expect(r.status).toBe(202);
    const metrics = r.headers
      .get("server-timing")!
      .split(/,\s*/)
      .map((m) => m.split(";dur="));
    expect(metrics.map(([name]) => name)).toEqual(["gate", "access", "chat", "total"]);
    expect(metrics.every(([, ms]) => Number(ms) >= 0)).toBe(true);
    // A refusal is timed too, up to where it was refused.
    const refused = await call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token, body: { content: "no key" } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("server-timing")).toMatch(/^gate;dur=[\d.]+,\s*total;dur=[\d.]+$/);
  });

  it("accepts exactly 100000 characters", async ({ w, chat }) => {
    expect((await send(w, chat.id, "я".repeat(100_000))).status).toBe(202);
  });

  it("requires replyToMessageId to name a message of this chat", async ({ clock, w }) => {
    const a = await newChat(w);
    const b = await newChat(w);
    await send(w, a.id, "first");
    await runNextAlarm(room(a.id), clock);
    const page = await historyOf(w, a.id);
    expect(page.items.map((m) => m.role)).toEqual(["owner", "user"]);
    expectProblem(await send(w, a.id, "x", crypto.randomUUID(), { replyToMessageId: crypto.randomUUID() }), 400, "invalid_request");
    expectProblem(await send(w, b.id, "x", crypto.randomUUID(), { replyToMessageId: page.items[0]!.id }), 400, "invalid_request");
    expect((await send(w, a.id, "reply", crypto.randomUUID(), { replyToMessageId: page.items[0]!.id })).status).toBe(202);
  });

  it("refuses a new message to an archived chat with 409", async ({ w, chat }) => {
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await send(w, chat.id, "after"), 409, "chat_archived");
  });
});
