import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect } from "vitest";
import { localReply } from "../../src/agent/local";
import { alarmOf, frozenClock, runNextAlarm, settle, type Clock } from "../clock";
import { chatsPath, creditsOf, expectProblem, historyOf, newChat, peek, queueOf, room, send, world, type World } from "../helpers";
import { openEvents } from "../sse";
import { cancel, sql, steer, stop, stopped, submissionOf, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";

const evict = (chatId: string) => evictDurableObject(room(chatId));

/** A chat whose task is running with its first part written. */
async function runningTask(clock: Clock) {
  const w = await world();
  const c = await newChat(w);
  await send(w, c.id, "the running task");
  await runNextAlarm(room(c.id), clock);
  await runNextAlarm(room(c.id), clock);
  return { w, chatId: c.id, reply: await workingReply(w, c.id) };
}

/** Every event the chat has kept, replayed by a stream from the start (evictions end live streams, not the log). */
async function allEvents(w: World, chatId: string) {
  // A row may hold a folded run of events, up to last_id.
  const newest = (await sql<{ newest: number }>(chatId, "SELECT MAX(COALESCE(last_id, id)) AS newest FROM events"))[0]!.newest;
  const s = await openEvents(`${chatsPath(w)}/${chatId}/events?after=0`, w.token);
  await s.until((e) => e.id === newest);
  await s.close();
  return s.events;
}

/** The reply's end as storage and the stream show it: one final state, and nothing written after it. */
async function expectOneEnd(w: World, chatId: string, replyId: string) {
  const stored = (await peek(w, chatId)).find((m) => m.id === replyId)!;
  expect(stored.status).not.toBe("working");
  const events = await allEvents(w, chatId);
  const ends = events.filter((e) => e.type === "message" && e.data.id === replyId && e.data.status !== "working");
  expect(ends.map((e) => e.data)).toEqual([stored]);
  expect(events.some((e) => e.type === "message.delta" && e.data.id === replyId && e.id > ends[0]!.id)).toBe(false);
  const deltas = events.filter((e) => e.type === "message.delta" && e.data.id === replyId).map((e) => e.data.text);
  expect(deltas.join("")).toBe(stored.content);
  return stored;
}

describe("a stop against the agent's own end", () => {
  it.each([false, true])("has exactly one final state when both come at once (evicted first: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    clock.set((await alarmOf(room(chatId)))! + 1_000); // past the end of the agent's time
    if (evicted) await evict(chatId);
    const [answer] = await Promise.all([stop(w, chatId, reply.id), runDurableObjectAlarm(room(chatId))]);
    expect(answer.status).toBe(200);
    await settle(room(chatId), clock);
    const stored = await expectOneEnd(w, chatId, reply.id);
    expect(stopped(answer)).toEqual(stored);
    expect((await stop(w, chatId, reply.id)).json).toEqual(stored);
  });

  it.each([false, true])("ends as the first of them says: the agent's end, then a late stop (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    await settle(room(chatId), clock);
    if (evicted) await evict(chatId);
    const late = await stop(w, chatId, reply.id);
    expect(stopped(late).status).toBe("success");
    expect(stopped(late).content).toBe(localReply({ content: "the running task" }));
    expect(await expectOneEnd(w, chatId, reply.id)).toEqual(stopped(late));
  });

  it.each([false, true])("ends as the first of them says: a stop, then the agent's time runs out (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    const answer = await stop(w, chatId, reply.id);
    if (evicted) await evict(chatId);
    clock.advance(60_000);
    await settle(room(chatId), clock);
    if (evicted) await evict(chatId);
    const stored = await expectOneEnd(w, chatId, reply.id);
    expect(stored).toEqual({ ...reply, status: "interrupted_by_user", usage: { credits: 1, inputTokens: null, outputTokens: null } });
    expect(stopped(answer)).toEqual(stored);
  });
});

describe("a cancel against resends of the same key", () => {
  it.each([false, true])("never runs and is never charged, whatever the order (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "running");
    const key = crypto.randomUUID();
    const queued = await send(w, c.id, "cancel me", key);
    const id = queued.json.submissionId as string;
    if (evicted) await evict(c.id);
    const answers = await Promise.all([send(w, c.id, "cancel me", key), cancel(w, c.id, id), send(w, c.id, "cancel me", key), send(w, c.id, "cancel me", key)]);
    expect(answers[1]!.status).toBe(204);
    for (const r of [answers[0]!, answers[2]!, answers[3]!]) {
      if (r.status === 202) expect(r.json.submissionId).toBe(id);
      else expectProblem(r, 409, "submission_cancelled");
    }
    if (evicted) await evict(c.id);
    expectProblem(await send(w, c.id, "cancel me", key), 409, "submission_cancelled");
    await settle(room(c.id), clock);
    if (evicted) await evict(c.id);
    expectProblem(await send(w, c.id, "cancel me", key), 409, "submission_cancelled");
    expect((await peek(w, c.id)).some((m) => m.content === "cancel me")).toBe(false);
    expect(await creditsOf(w.account.id)).toBe(999);
    expect((await submissionOf(w, c.id, id)).state!.status).toBe("cancelled");
  });
});

describe("a steer against a stop and against the task's end", () => {
  /** The steering text ran exactly once: taken by the first task, or as a task of its own. */
  async function expectTakenOrOwn(w: World, chatId: string, firstTaskId: string, text: string) {
    const items = (await historyOf(w, chatId)).items;
    const users = items.filter((m) => m.role === "user" && m.content === text);
    expect(users).toHaveLength(1);
    const owners = items.filter((m) => m.role === "owner");
    const first = owners.find((m) => m.taskId === firstTaskId)!;
    if (users[0]!.taskId === firstTaskId) {
      expect(first.content.endsWith(` Noted: “${text}”`) || first.status === "interrupted_by_user").toBe(true);
      expect(owners).toHaveLength(1);
      return "taken";
    }
    expect(first.content).not.toContain(text);
    expect(owners.find((m) => m.taskId === users[0]!.taskId)!.content).toBe(localReply({ content: text }));
    return "own";
  }

  it.each([false, true])("a steer, then a stop before the agent's next step: it runs as its own task (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    expect((await steer(w, chatId, "left behind")).json.disposition).toBe("queued");
    if (evicted) await evict(chatId);
    await stop(w, chatId, reply.id);
    if (evicted) await evict(chatId);
    expect((await queueOf(w, chatId)).items.map((e) => e.status)).toEqual(["queued"]);
    await settle(room(chatId), clock);
    expect(await expectTakenOrOwn(w, chatId, reply.taskId!, "left behind")).toBe("own");
    expect(await creditsOf(w.account.id)).toBe(998);
  });

  it.each([false, true])("a stop, then a steer: it is sent as a message (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    await stop(w, chatId, reply.id);
    if (evicted) await evict(chatId);
    expect((await steer(w, chatId, "after the stop")).json.disposition).toBe("started");
    await settle(room(chatId), clock);
    expect(await expectTakenOrOwn(w, chatId, reply.taskId!, "after the stop")).toBe("own");
  });

  it.each([false, true])("a steer and the task's last step at once: taken or its own task, never lost, never both (evicted first: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    clock.set((await alarmOf(room(chatId)))! + 1_000); // past the agent's time: its next step is its last
    if (evicted) await evict(chatId);
    const [r] = await Promise.all([steer(w, chatId, "right at the end"), runDurableObjectAlarm(room(chatId))]);
    expect(r.status).toBe(202);
    await settle(room(chatId), clock);
    await expectTakenOrOwn(w, chatId, reply.taskId!, "right at the end");
    expect((await queueOf(w, chatId)).items).toEqual([]);
  });

  it.each([false, true])("a steer taken at a step, then a stop: the text stays with the stopped task (evicted between: %s)", async (evicted) => {
    const clock = frozenClock();
    const { w, chatId, reply } = await runningTask(clock);
    await steer(w, chatId, "taken before the stop");
    if (evicted) await evict(chatId);
    await runNextAlarm(room(chatId), clock);
    if (evicted) await evict(chatId);
    const answer = await stop(w, chatId, reply.id);
    expect(stopped(answer).status).toBe("interrupted_by_user");
    await settle(room(chatId), clock);
    expect(await expectTakenOrOwn(w, chatId, reply.taskId!, "taken before the stop")).toBe("taken");
    expect(await creditsOf(w.account.id)).toBe(999);
  });
});

describe("the chat object's memory under control of work", () => {
  /** What a client sees of the chat (read from its object, so comparing spends no token budget), and what it keeps for the queue bound. */
  const seen = (w: World, chatId: string) =>
    (async (r) => ({
      chat: await r.get(w.projectId),
      queue: await r.queueEntries(w.projectId),
      history: await r.messages(w.projectId, undefined, 100),
      load: await r.queueLoad(),
    }))(room(chatId));

  it("matches its storage after an eviction at every step of sends, steers, a take, a cancel, a stop and the tasks after", async ({ clock, w, chat }) => {
    const ids: Record<string, string> = {};
    const steps: [string, () => Promise<unknown>][] = [
      ["send A", async () => (ids.a = (await send(w, chat.id, "A")).json.submissionId)],
      ["A starts", () => runNextAlarm(room(chat.id), clock)],
      ["steer S1", () => steer(w, chat.id, "S1")],
      ["send B", async () => (ids.b = (await send(w, chat.id, "B")).json.submissionId)],
      ["steer S2", () => steer(w, chat.id, "S2")],
      ["A takes S1 and S2", () => runNextAlarm(room(chat.id), clock)],
      ["steer S3", () => steer(w, chat.id, "S3")],
      ["cancel B", () => cancel(w, chat.id, ids.b!)],
      ["stop A", async () => stop(w, chat.id, (await workingReply(w, chat.id)).id)],
      ["S3 starts", () => runNextAlarm(room(chat.id), clock)],
      ["S3's first part", () => runNextAlarm(room(chat.id), clock)],
      ["steer S4", () => steer(w, chat.id, "S4")],
      ["the rest", () => settle(room(chat.id), clock)],
    ];
    for (const [name, step] of steps) {
      await step();
      const before = await seen(w, chat.id);
      await evict(chat.id);
      expect(await seen(w, chat.id), name).toEqual(before);
    }
    const owners = (await historyOf(w, chat.id)).items.filter((m) => m.role === "owner").reverse();
    expect(owners.map((m) => m.status)).toEqual(["interrupted_by_user", "success"]);
    expect(owners[1]!.content).toBe(`${localReply({ content: "S3" })} Noted: “S4”`);
    expect(await creditsOf(w.account.id)).toBe(998);
  });
});
