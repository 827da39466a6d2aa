import { describe, expect } from "vitest";
import { localReply, noted } from "../../src/agent/local";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { admin, call, chatOf, chatsPath, creditsOf, expectProblem, historyOf, newChat, peek, queueOf, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { stop, steer, submissionOf, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";
import { STEERING_PER_TASK } from "../../src/agent/limits";

describe("steering a running task", () => {
  it("waits as a steering entry, is taken at the agent's next part, and the reply takes it into account, free of charge", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    await send(w, chat.id, "make a page");
    await runNextAlarm(room(chat.id), clock); // the task starts
    const reply = await workingReply(w, chat.id);

    const key = crypto.randomUUID();
    const r = await steer(w, chat.id, "use a blue theme", key);
    expect(r.status, r.text).toBe(202);
    expect(r.json).toEqual({ submissionId: expect.any(String), chatId: chat.id, disposition: "queued" });
    const replay = await steer(w, chat.id, "use a blue theme", key);
    expect(replay.json).toEqual(r.json);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect((await queueOf(w, chat.id)).items.map((e) => [e.id, e.status])).toEqual([[r.json.submissionId, "steering"]]);
    expect(await chatOf(w, chat.id)).toMatchObject({ isWorking: true, queuedCount: 0 });
    expect((await submissionOf(w, chat.id, r.json.submissionId)).state).toMatchObject({ status: "steering", taskId: null, userMessageId: null });

    await runNextAlarm(room(chat.id), clock); // the next part: the agent takes it
    const taken = (await peek(w, chat.id)).find((m) => m.role === "user" && m.content === "use a blue theme")!;
    expect(taken).toMatchObject({ taskId: reply.taskId, submissionId: r.json.submissionId, status: null });
    expect((await queueOf(w, chat.id)).items).toEqual([]);
    expect((await submissionOf(w, chat.id, r.json.submissionId)).state).toEqual({
      id: r.json.submissionId,
      status: "done",
      taskId: reply.taskId,
      userMessageId: taken.id,
      replyMessageId: reply.id,
      createdAt: expect.any(String),
      // A steering text a running task takes is free.
      credits: { charged: 0, refunded: 0 },
      failure: null,
      ifBusy: "steer",
    });

    await settle(room(chat.id), clock);
    const items = await peek(w, chat.id);
    const done = items.find((m) => m.id === reply.id)!;
    expect(done.status).toBe("success");
    expect(done.content).toBe(`${localReply({ content: "make a page" })} Noted: “use a blue theme”`);
    expect(items.filter((m) => m.role === "owner")).toHaveLength(1);
    expect(await creditsOf(w.account.id)).toBe(999);
    expectProblem(await send(w, chat.id, "use a blue theme", key), 409, "idempotency_key_reused");

    // On the stream: the entry joins as steering, leaves, its message carries the task's id, and the deltas add up to the reply.
    await s.until((e) => e.type === "queue.entry" && e.data.id === r.json.submissionId && e.data.status === "steering");
    await s.until((e) => e.type === "queue.removed" && e.data.id === r.json.submissionId);
    const takenEvent = await s.until((e) => e.type === "message" && e.data.id === taken.id && e.data.taskId === reply.taskId);
    const own = items.find((m) => m.role === "user" && m.content === "make a page")!;
    const ownEvent = await s.until((e) => e.type === "message" && e.data.id === own.id);
    for (const [event, message] of [
      [takenEvent, taken],
      [ownEvent, own],
    ] as const) {
      expect(JSON.stringify(event.data), "the event reads as the history does, key for key").toBe(JSON.stringify(message));
    }
    const end = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === reply.id && e.id < end.id);
    expect(deltas.map((e) => e.data.text).join("")).toBe(done.content);
    await s.close();
  });

  it("takes texts in submission order, at most five a task; the rest wait and then run as tasks of their own, in order", async ({ clock, w, chat }) => {
    await send(w, chat.id, "first task");
    await runNextAlarm(room(chat.id), clock);
    const texts = Array.from({ length: STEERING_PER_TASK + 2 }, (_, i) => `steer ${i}`);
    for (const text of texts) expect((await steer(w, chat.id, text)).json.disposition).toBe("queued");
    await runNextAlarm(room(chat.id), clock);
    expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([
      ["steer 5", "steering"],
      ["steer 6", "steering"],
    ]);
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock); // the last part ends the task; the two left become queued, then the first of them starts
    const page = await historyOf(w, chat.id);
    const first = page.items.find((m) => m.role === "owner" && m.status === "success")!;
    expect(first.content).toBe(localReply({ content: "first task" }) + texts.slice(0, STEERING_PER_TASK).map(noted).join(""));
    await settle(room(chat.id), clock);
    const owners = (await historyOf(w, chat.id)).items.filter((m) => m.role === "owner").reverse();
    expect(owners.map((m) => m.content)).toEqual([first.content, localReply({ content: "steer 5" }), localReply({ content: "steer 6" })]);
    expect(await creditsOf(w.account.id)).toBe(997);
  });

  it("is taken at the last part too", async ({ clock, w, chat }) => {
    await send(w, chat.id, "almost done");
    for (let i = 0; i < 4; i++) await runNextAlarm(room(chat.id), clock); // the start and the first three parts
    await steer(w, chat.id, "just in time");
    await settle(room(chat.id), clock);
    expect(replyOf(await peek(w, chat.id))!.endsWith(" Noted: “just in time”")).toBe(true);
    expect((await historyOf(w, chat.id)).items.filter((m) => m.role === "owner")).toHaveLength(1);
  });

  it("quotes the first 120 code points of a long text, without an ellipsis", async ({ clock, w, chat }) => {
    await send(w, chat.id, "go");
    await runNextAlarm(room(chat.id), clock);
    const long = "😀".repeat(100) + "x".repeat(100);
    await steer(w, chat.id, long);
    await settle(room(chat.id), clock);
    expect(replyOf(await peek(w, chat.id))!.endsWith(` Noted: “${"😀".repeat(100)}${"x".repeat(20)}”`)).toBe(true);
  });

  it("runs a text the task never took as a task of its own, in its place in submission order, once the task is stopped", async ({ clock, w, chat }) => {
    await send(w, chat.id, "long task");
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    await send(w, chat.id, "queued before the steer");
    const st = await steer(w, chat.id, "left behind");
    expect((await stop(w, chat.id, reply.id)).status).toBe(200);
    expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([
      ["queued before the steer", "queued"],
      ["left behind", "queued"],
    ]);
    expect((await chatOf(w, chat.id)).queuedCount).toBe(2);
    await settle(room(chat.id), clock);
    const items = (await historyOf(w, chat.id)).items.reverse();
    expect(items.map((m) => [m.role, m.role === "user" ? m.content : m.status])).toEqual([
      ["user", "long task"],
      ["owner", "interrupted_by_user"],
      ["user", "queued before the steer"],
      ["owner", "success"],
      ["user", "left behind"],
      ["owner", "success"],
    ]);
    expect(items[1]!.content).not.toContain("left behind");
    const own = items[4]!;
    expect(own.submissionId).toBe(st.json.submissionId);
    expect(own.taskId).not.toBe(reply.taskId);
    expect((await submissionOf(w, chat.id, st.json.submissionId)).state).toMatchObject({ status: "done", taskId: own.taskId, userMessageId: own.id, replyMessageId: items[5]!.id });
  });

  it("steers the task being dispatched (the chat shows it working), and waits as a message of its own if that one cannot start", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 1 });
    const c = await newChat(w);
    expect((await send(w, c.id, "on its way")).json.disposition).toBe("started");
    expect((await chatOf(w, c.id)).isWorking).toBe(true);
    expect((await steer(w, c.id, "and make it blue")).json.disposition).toBe("queued");
    expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(["dispatching", "steering"]);
    await settle(room(c.id), clock);
    expect(replyOf(await peek(w, c.id))).toBe(`${localReply({ content: "on its way" })} Noted: “and make it blue”`);

    // No credits left: the next one fails to start, and a steer meant for it runs (and fails) as its own.
    await send(w, c.id, "no credits for this");
    await steer(w, c.id, "nor for this");
    expect((await queueOf(w, c.id)).items.map((e) => [e.content, e.status])).toEqual([
      ["no credits for this", "dispatching"],
      ["nor for this", "steering"],
    ]);
    await settle(room(c.id), clock);
    expect((await queueOf(w, c.id)).items.map((e) => [e.content, e.status])).toEqual([
      ["no credits for this", "failed"],
      ["nor for this", "failed"],
    ]);
  });

  it("waits as a message of its own when the task being dispatched is held back by maintenance", async ({ clock, w, chat }) => {
    await send(w, chat.id, "before maintenance");
    await steer(w, chat.id, "steer it");
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).status).toBe(200);
    try {
      clock.advance(60_000); // the chat's copy of the flag is stale: the alarm reads it again
      await runNextAlarm(room(chat.id), clock);
      expect((await queueOf(w, chat.id)).items.map((e) => [e.content, e.status])).toEqual([
        ["before maintenance", "queued"],
        ["steer it", "queued"],
      ]);
    } finally {
      await admin("PUT", "/admin/maintenance", { enabled: false });
    }
    clock.advance(60_000);
    await settle(room(chat.id), clock);
    const owners = (await historyOf(w, chat.id)).items.filter((m) => m.role === "owner").map((m) => m.content);
    expect(owners).toEqual([localReply({ content: "steer it" }), localReply({ content: "before maintenance" })]);
  });

  it("is sent like a message when no task runs: started on an idle chat, queued during maintenance", async ({ clock, w, chat }) => {
    const idle = await steer(w, chat.id, "nothing is running");
    expect(idle.json.disposition).toBe("started");
    expect((await queueOf(w, chat.id)).items.map((e) => e.status)).toEqual(["dispatching"]);
    await settle(room(chat.id), clock);
    expect(replyOf(await peek(w, chat.id))).toBe(localReply({ content: "nothing is running" }));
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).status).toBe(200);
    try {
      expect((await steer(w, chat.id, "during maintenance")).json.disposition).toBe("queued");
      expect((await queueOf(w, chat.id)).items.map((e) => e.status)).toEqual(["queued"]);
    } finally {
      await admin("PUT", "/admin/maintenance", { enabled: false });
    }
  });

  it("validates and answers like sending a message", async () => {
    frozenClock();
    const w = await world();
    const c = await newChat(w);
    const path = `${chatsPath(w)}/${c.id}/steer`;
    expectProblem(await call("POST", path, { token: w.token, body: { content: "no key" } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": "nope" }, body: { content: "x" } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "" } }), 400, "invalid_request");
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "x", model: "m" } }), 400, "invalid_request");
    const target = { content: "x", replyToMessageId: crypto.randomUUID() };
    expectProblem(await call("POST", path, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: target }), 400, "invalid_request");
    const key = crypto.randomUUID();
    expect((await send(w, c.id, "sent first", key)).status).toBe(202);
    expectProblem(await steer(w, c.id, "sent first", key), 409, "idempotency_key_reused");
    expect((await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await steer(w, c.id, "archived"), 409, "chat_archived");
    expectProblem(await steer(w, crypto.randomUUID(), "no chat"), 404, "not_found");
  });
});

const replyOf = (items: { role: string; content: string }[]) => items.find((m) => m.role === "owner")?.content;
