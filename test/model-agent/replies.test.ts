import { describe, expect, it, vi } from "vitest";
import { frozenClock, runNextAlarm } from "../clock";
import { chatOf, chatsPath, historyOf, newChat, peek, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { fakeModel, replying } from "./fake-model";

const text = (m: { content: unknown }) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
const conversationOf = (body: any) => body.messages.filter((m: { role: string }) => m.role !== "system").map((m: any) => [m.role, text(m)]);

describe("a chat on an OpenAI-compatible model", () => {
  it("asks the model with its key, model, system prompt and the message last, and streams the reply into the history", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: ["Hel", "lo ", "there."], gapMs: 300 }));
    const w = await world();
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    await send(w, c.id, "Hello model");
    await runNextAlarm(room(c.id), clock);
    const call = await model.made(1);
    expect(call.authorization).toBe("Bearer sk-test-model-key");
    expect(call.body).toMatchObject({ model: "test-model", stream: true });
    expect(call.body.messages[0]).toMatchObject({ role: "system", content: "You are the test agent." });
    expect(conversationOf(call.body)).toEqual([["user", "Hello model"]]);
    expect(JSON.stringify(call.body.tools)).toContain("ask_user");

    // While the model writes, the reply grows in the history and on the stream.
    const first = await s.until((e) => e.type === "message.delta");
    expect(first.data.text).toBe("Hel");
    expect((await peek(w, c.id))[0]).toMatchObject({ status: "working", content: "Hel" });
    const done = await s.until((e) => e.type === "message" && e.data.role === "owner" && e.data.status === "success");
    expect(done.data.content).toBe("Hello there.");
    expect(s.events.filter((e) => e.type === "message.delta").map((e) => e.data.text)).toEqual(["Hel", "lo ", "there."]);
    expect((await chatOf(w, c.id)).isWorking).toBe(false);
    await s.close();
  });

  it("writes a reply of a thousand chunks in a few batches, not one write per chunk", async () => {
    const clock = frozenClock();
    const words = Array.from({ length: 1_000 }, (_, i) => `w${i} `);
    fakeModel(replying({ parts: words }));
    const w = await world();
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    await send(w, c.id, "Write a lot");
    await runNextAlarm(room(c.id), clock);
    const done = await s.until((e) => e.type === "message" && e.data.role === "owner" && e.data.status === "success");
    expect(done.data.content).toBe(words.join(""));
    const deltas = s.events.filter((e) => e.type === "message.delta");
    // Written at once: the first piece goes out at once, the rest as batches at most every 250 ms.
    expect(deltas.length).toBeLessThanOrEqual(3);
    expect(deltas.map((e) => e.data.text).join("")).toBe(words.join(""));
    await s.close();
  });

  it("gives the model the chat's history, oldest first, and quotes the message a reply answers", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: ["an answer"] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "first question");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]!.status).toBe("success"));
    const firstUser = (await historyOf(w, c.id)).items.find((m) => m.role === "user")!;
    await send(w, c.id, "second question", crypto.randomUUID(), { replyToMessageId: firstUser.id });
    await runNextAlarm(room(c.id), clock);
    const two = await model.made(2);
    expect(conversationOf(two.body)).toEqual([
      ["user", "first question"],
      ["assistant", "an answer"],
      ["user", "In reply to this earlier message:\n> first question\n\nsecond question"],
    ]);
  });

  it("ends the task with the question when the model calls ask_user, and later gives it back as plain assistant text", async () => {
    const clock = frozenClock();
    const model = fakeModel((_, index) => (index === 0 ? { parts: [], ask: "Which color do you like?" } : { parts: ["Blue, then."] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "pick a theme");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "success", content: "Which color do you like?" }));
    expect((await chatOf(w, c.id)).isAwaitingUser).toBe(true);

    await send(w, c.id, "blue");
    expect((await chatOf(w, c.id)).isAwaitingUser).toBe(false);
    await runNextAlarm(room(c.id), clock);
    const next = await model.made(2);
    expect(conversationOf(next.body)).toEqual([
      ["user", "pick a theme"],
      ["assistant", "Which color do you like?"],
      ["user", "blue"],
    ]);
    expect(next.body.messages.some((m: { tool_calls?: unknown }) => m.tool_calls)).toBe(false);
  });

  it("keeps the reply working and empty while the model takes its time to start", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: ["Finally."], firstTokenMs: 600 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "think hard");
    await runNextAlarm(room(c.id), clock);
    await model.made(1);
    expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "working", content: "" });
    expect((await chatOf(w, c.id)).isWorking).toBe(true);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ status: "success", content: "Finally." }));
  });
});
