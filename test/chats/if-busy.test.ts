import { describe, expect } from "vitest";
import { runNextAlarm, settle } from "../clock";
import { admin, call, chatOf, chatsPath, creditsOf, expectProblem, historyOf, peek, queueOf, room, send, type World } from "../helpers";
import { openEvents } from "../sse";
import { cancel, followerQueue, stop, submissionOf, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";

/** A send with an If-Busy header (none when undefined), as a client makes it. */
const sendIf = (w: World, chatId: string, content: string, ifBusy: string | undefined, key: string = crypto.randomUUID()) =>
  call("POST", `${chatsPath(w)}/${chatId}/messages`, {
    token: w.token,
    headers: { "idempotency-key": key, ...(ifBusy === undefined ? {} : { "if-busy": ifBusy }) },
    body: { content },
  });
const ifBusyOf = async (w: World, chatId: string, id: string) => (await submissionOf(w, chatId, id)).state!.ifBusy;
const maintenance = async (enabled: boolean) => expect((await admin("PUT", "/admin/maintenance", { enabled })).status).toBe(200);
/** The user messages of the chat, oldest first: the order its tasks ran in. */
const ranInOrder = async (w: World, chatId: string) =>
  (await historyOf(w, chatId)).items
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .reverse();

describe("If-Busy on a send", () => {
  it("on an idle chat every value sends at once, and the submission records the value it was accepted with", async ({ w }) => {
    for (const [value, recorded] of [
      [undefined, "queue"],
      [" Queue", "queue"],
      ["STEER", "steer"],
      ["interrupt ", "interrupt"],
      ["reject", "reject"],
      ["reject, reject", "reject"],
    ] as const) {
      const chat = (await call("POST", chatsPath(w), { token: w.token, body: { title: "idle" } })).json;
      const r = await sendIf(w, chat.id, "hello", value);
      expect(r.status, r.text).toBe(202);
      expect(r.json.disposition).toBe("started");
      expect(await ifBusyOf(w, chat.id, r.json.submissionId)).toBe(recorded);
    }
  });

  it("refuses any other value, or two different values, with a 400 naming If-Busy, storing nothing and leaving the key free", async ({ w, chat }) => {
    const key = crypto.randomUUID();
    for (const value of ["later", "", "queue,steer", "re ject", "queue;q=1"]) {
      const r = await sendIf(w, chat.id, "never stored", value, key);
      expectProblem(r, 400, "invalid_request");
      expect(r.text.toLowerCase()).toContain("if-busy");
    }
    expect((await queueOf(w, chat.id)).items).toEqual([]);
    const ok = await sendIf(w, chat.id, "never stored", "reject", key);
    expect(ok.status).toBe(202);
    expect(ok.headers.get("idempotency-replayed")).toBeNull();
  });

  it("while a task runs: queue waits its turn, steer is taken by the running task for free, reject is 409 chat_busy with the key left free", async ({ clock, w, chat }) => {
    await send(w, chat.id, "first");
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);

    const queued = await sendIf(w, chat.id, "second", "queue");
    expect(queued.json.disposition).toBe("queued");
    const steered = await sendIf(w, chat.id, "be brief", "steer");
    expect(steered.status).toBe(202);
    expect(steered.json.disposition).toBe("queued");
    expect((await queueOf(w, chat.id)).items.map((e) => [e.id, e.status])).toEqual([
      [queued.json.submissionId, "queued"],
      [steered.json.submissionId, "steering"],
    ]);

    const key = crypto.randomUUID();
    const refused = await sendIf(w, chat.id, "only if free", "reject", key);
    expectProblem(refused, 409, "chat_busy");
    expect((await queueOf(w, chat.id)).items).toHaveLength(2);

    await settle(room(chat.id), clock);
    const done = (await peek(w, chat.id)).find((m) => m.id === reply.id)!;
    expect(done.status).toBe("success");
    expect(done.content).toContain("be brief");
    const taken = await submissionOf(w, chat.id, steered.json.submissionId);
    expect(taken.state).toMatchObject({ status: "done", taskId: reply.taskId, ifBusy: "steer", credits: { charged: 0, refunded: 0 } });
    expect(await ranInOrder(w, chat.id)).toEqual(["first", "be brief", "second"]);
    expect(await creditsOf(w.account.id)).toBe(998);

    // The refused key was not taken: on the idle chat it sends.
    const later = await sendIf(w, chat.id, "only if free", "reject", key);
    expect(later.status).toBe(202);
    expect(later.json.disposition).toBe("started");
    expect(later.headers.get("idempotency-replayed")).toBeNull();
  });

  it("interrupt stops the working reply, keeping its text, and runs ahead of the entries queued before it, which keep their order", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    await send(w, chat.id, "a long answer");
    await runNextAlarm(room(chat.id), clock);
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    expect(reply.content.length).toBeGreaterThan(0);
    const q1 = (await send(w, chat.id, "queued one")).json.submissionId;
    const q2 = (await sendIf(w, chat.id, "queued two", "queue")).json.submissionId;

    const n = await sendIf(w, chat.id, "drop that, do this", "interrupt");
    expect(n.status, n.text).toBe(202);
    expect(n.json.disposition).toBe("started");
    const stopped = (await peek(w, chat.id)).find((m) => m.id === reply.id)!;
    expect(stopped).toMatchObject({ status: "interrupted_by_user", content: reply.content });
    // The queue is in run order, and a follower that places entries by `before` holds the same.
    const queue = (await queueOf(w, chat.id)).items.map((e) => e.id);
    expect(queue).toEqual([n.json.submissionId, q1, q2]);
    await s.received(() => JSON.stringify(followerQueue(s.events).map((e) => e.id)) === JSON.stringify(queue));

    await settle(room(chat.id), clock);
    expect(await ranInOrder(w, chat.id)).toEqual(["a long answer", "drop that, do this", "queued one", "queued two"]);
    expect((await peek(w, chat.id)).find((m) => m.id === reply.id)).toEqual(stopped);
    expect(await ifBusyOf(w, chat.id, n.json.submissionId)).toBe("interrupt");
    // Four tasks charged; the interrupted one keeps its charge.
    expect(await creditsOf(w.account.id)).toBe(996);
    expect(followerQueue(s.events)).toEqual([]);
    await s.close();
  });

  it("with only held entries (maintenance): queue and steer wait in order, interrupt waits first, reject is 409 chat_busy", async ({ clock, w, chat }) => {
    await maintenance(true);
    try {
      const held = (await send(w, chat.id, "held")).json;
      expect(held.disposition).toBe("queued");
      expect((await chatOf(w, chat.id)).isWorking).toBe(false);
      const steer = (await sendIf(w, chat.id, "steer while held", "steer")).json;
      expect(steer.disposition).toBe("queued");
      expectProblem(await sendIf(w, chat.id, "only if free", "reject"), 409, "chat_busy");
      const first = (await sendIf(w, chat.id, "held, but first", "interrupt")).json;
      expect(first.disposition).toBe("queued");
      expect((await queueOf(w, chat.id)).items.map((e) => [e.id, e.status])).toEqual([
        [first.submissionId, "queued"],
        [held.submissionId, "queued"],
        [steer.submissionId, "queued"],
      ]);
    } finally {
      await maintenance(false);
    }
    await settle(room(chat.id), clock);
    expect(await ranInOrder(w, chat.id)).toEqual(["held, but first", "held", "steer while held"]);
  });

  it("the check order: 400, 404, a replay (whatever If-Busy it carries) before chat_archived, chat_archived before chat_busy", async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock);
    const key = crypto.randomUUID();
    const queued = await send(w, chat.id, "queued", key);
    expect(queued.json.disposition).toBe("queued");

    const badKey = await call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token, headers: { "idempotency-key": "no", "if-busy": "reject" }, body: { content: "x" } });
    expectProblem(badKey, 400, "invalid_request");
    expectProblem(await sendIf(w, crypto.randomUUID(), "x", "reject"), 404, "not_found");
    for (const value of ["reject", "interrupt", "steer", undefined]) {
      const replay = await sendIf(w, chat.id, "queued", value, key);
      expect(replay.status).toBe(202);
      expect(replay.headers.get("idempotency-replayed")).toBe("true");
      expect(replay.json).toEqual(queued.json);
    }
    expect((await workingReply(w, chat.id)).status).toBe("working");
    expectProblem(await sendIf(w, chat.id, "queued", "whenever", key), 400, "invalid_request");

    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await sendIf(w, chat.id, "to the archive", "reject"), 409, "chat_archived");
    expect((await sendIf(w, chat.id, "queued", "reject", key)).headers.get("idempotency-replayed")).toBe("true");
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/restore`, { token: w.token })).status).toBe(200);
    expectProblem(await sendIf(w, chat.id, "after the restore", "reject"), 409, "chat_busy");
    expect(await ifBusyOf(w, chat.id, queued.json.submissionId)).toBe("queue");
  });

  it("reject under a parallel burst on an idle chat: exactly one starts, the rest are 409 chat_busy with nothing stored", async ({ w, chat }) => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => sendIf(w, chat.id, `burst ${i}`, "reject")));
    const started = answers.filter((r) => r.status === 202);
    expect(started).toHaveLength(1);
    expect(started[0]!.json.disposition).toBe("started");
    for (const r of answers.filter((x) => x.status !== 202)) expectProblem(r, 409, "chat_busy");
    expect((await queueOf(w, chat.id)).items.map((e) => e.id)).toEqual([started[0]!.json.submissionId]);
  });
});

describe("interrupt races", () => {
  it("two interrupts: the second stops the first's task before its agent starts (its reply stopped, empty, charged) and runs first", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    await send(w, chat.id, "working");
    await runNextAlarm(room(chat.id), clock);
    const queued = (await send(w, chat.id, "queued")).json.submissionId;
    const [a, b] = await Promise.all([sendIf(w, chat.id, "interrupt a", "interrupt"), sendIf(w, chat.id, "interrupt b", "interrupt")]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await settle(room(chat.id), clock);

    const order = await ranInOrder(w, chat.id);
    expect(order).toHaveLength(4);
    expect(order.slice(3)).toEqual(["queued"]);
    // Whichever was taken first was being dispatched when the second came: it ends stopped, its agent never heard of it.
    const [first, second] = order[1] === "interrupt a" ? [a, b] : [b, a];
    expect(order.slice(1, 3)).toEqual(order[1] === "interrupt a" ? ["interrupt a", "interrupt b"] : ["interrupt b", "interrupt a"]);
    const replies = (await peek(w, chat.id)).filter((m) => m.role === "owner");
    const replyOf = (r: typeof a) => replies.find((m) => m.submissionId === r.json.submissionId)!;
    expect(replyOf(first)).toMatchObject({ status: "interrupted_by_user", content: "", usage: { credits: 1 } });
    expect(replyOf(second).status).toBe("success");
    // The stopped one's reply was written stopped: no event ever showed it working.
    const events = s.events.filter((e) => e.type === "message" && e.data.id === replyOf(first).id).map((e) => e.data.status);
    expect(events).toEqual(["interrupted_by_user"]);
    expect((await submissionOf(w, chat.id, first.json.submissionId)).state).toMatchObject({ status: "done", credits: { charged: 1, refunded: 0 } });
    expect((await submissionOf(w, chat.id, queued)).state!.status).toBe("done");
    expect(await creditsOf(w.account.id)).toBe(996);
    await s.close();
  });

  it("interrupt after the reply ended on its own is a send to an idle chat; interrupting the ending reply stops nothing already ended", async ({ clock, w, chat }) => {
    await send(w, chat.id, "short");
    await settle(room(chat.id), clock);
    const [done] = await peek(w, chat.id);
    const n = await sendIf(w, chat.id, "next", "interrupt");
    expect(n.json.disposition).toBe("started");
    await settle(room(chat.id), clock);
    expect((await peek(w, chat.id)).find((m) => m.id === done!.id)).toEqual(done);
    expect(await ranInOrder(w, chat.id)).toEqual(["short", "next"]);

    // A stop and an interrupt of the same reply at once: one of them ends it, both answer.
    await send(w, chat.id, "third");
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    const [stopAnswer, interrupt] = await Promise.all([stop(w, chat.id, reply.id), sendIf(w, chat.id, "fourth", "interrupt")]);
    expect(stopAnswer.status).toBe(200);
    expect(interrupt.status).toBe(202);
    await settle(room(chat.id), clock);
    const replies = (await peek(w, chat.id)).filter((m) => m.role === "owner");
    expect(replies.filter((m) => m.status === "interrupted_by_user").map((m) => m.id)).toEqual([reply.id]);
    expect(await ranInOrder(w, chat.id)).toEqual(["short", "next", "third", "fourth"]);
  });

  it("interrupt and cancel: a held interrupt that is cancelled never runs, and the entries behind it run in their order", async ({ clock, w, chat }) => {
    await maintenance(true);
    let n: string;
    try {
      await send(w, chat.id, "one");
      await send(w, chat.id, "two");
      n = (await sendIf(w, chat.id, "interrupting", "interrupt")).json.submissionId;
      const [cancelled, other] = await Promise.all([cancel(w, chat.id, n), sendIf(w, chat.id, "another interrupt", "interrupt")]);
      expect(cancelled.status).toBe(204);
      expect(other.json.disposition).toBe("queued");
    } finally {
      await maintenance(false);
    }
    await settle(room(chat.id), clock);
    expect(await ranInOrder(w, chat.id)).toEqual(["another interrupt", "one", "two"]);
    expect((await submissionOf(w, chat.id, n)).state!.status).toBe("cancelled");
  });
});
