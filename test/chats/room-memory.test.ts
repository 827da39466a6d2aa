import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { chatOf, chatsPath, historyOf, newChat, queueOf, room, send, world, type World } from "../helpers";
import { openEvents } from "../sse";

/** What a client sees of a chat; after an eviction the object rebuilds it from SQLite alone. */
const seen = async (w: World, chatId: string) => ({ chat: await chatOf(w, chatId), queue: await queueOf(w, chatId), history: await historyOf(w, chatId) });

async function expectSameAfterEviction(w: World, chatId: string, step: string) {
  const before = await seen(w, chatId);
  await evictDurableObject(room(chatId));
  expect(await seen(w, chatId), step).toEqual(before);
  return before;
}

describe("the chat object's memory", () => {
  it("matches its storage at every step: sends, a task's parts, its end, a failure for want of credits", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 2 });
    const c = await newChat(w);
    for (const content of ["one", "two", "three"]) await send(w, c.id, content);
    // The first went straight to the agent (dispatching); two wait.
    expect((await expectSameAfterEviction(w, c.id, "three accepted")).chat).toMatchObject({ isWorking: true, queuedCount: 2 });
    await runNextAlarm(room(c.id), clock);
    expect((await expectSameAfterEviction(w, c.id, "the first task started")).chat).toMatchObject({ isWorking: true, queuedCount: 2 });
    await runNextAlarm(room(c.id), clock);
    const growing = await expectSameAfterEviction(w, c.id, "the first reply's first part");
    expect(growing.chat.latestAgentPreview.length).toBeGreaterThan(0);
    await settle(room(c.id), clock);
    const done = await expectSameAfterEviction(w, c.id, "all finished");
    expect(done.chat).toMatchObject({ isWorking: false, queuedCount: 0 });
    expect(done.chat.latestAgentPreview).toContain("two");
    expect(done.queue.items.map((e) => e.status)).toEqual(["failed"]);
    expect(done.history.items[0]!.role).toBe("error");
  });

  it("keeps a growing reply's preview exact past 500 characters, counting a pair of surrogates as one", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "a long one");
    await runNextAlarm(room(c.id), clock);
    const taskId = (await historyOf(w, c.id)).items.find((m) => m.role === "owner")!.taskId!;
    // Parts as an http agent would send them; the preview fills up in the second and stays in the third.
    expect(await room(c.id).appendPartial(taskId, 1, "a".repeat(450))).toBe("appended");
    expect(await room(c.id).appendPartial(taskId, 2, `${"b".repeat(49)}\u{1F600}${"c".repeat(50)}`)).toBe("appended");
    expect(await room(c.id).appendPartial(taskId, 3, "d")).toBe("appended");
    const { chat } = await expectSameAfterEviction(w, c.id, "a reply of 601 code points");
    expect(chat.latestAgentPreview).toBe(`${"a".repeat(450)}${"b".repeat(49)}\u{1F600}`);
  });

  it("announces a failed entry's leaving when its 24 hours end, by its own alarm, though a read saw it go first", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const sent = await send(w, c.id, "no credits for this");
    await settle(room(c.id), clock);
    expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(["failed"]);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    const snapshot = await s.next();
    expect(snapshot.data.queue.items.map((e: { status: string }) => e.status)).toEqual(["failed"]);
    // The alarm is set for the entry's 24 hours; a read just after them no longer shows it.
    const expiry = (await alarmOf(room(c.id)))!;
    expect(expiry).toBeGreaterThanOrEqual(clock.now() + 24 * 3_600_000 - 60_000);
    clock.set(expiry + 1);
    expect((await queueOf(w, c.id)).items).toEqual([]);
    expect(await runNextAlarm(room(c.id), clock)).toBe(true);
    const removed = await s.until((e) => e.type === "queue.removed");
    expect(removed.data).toEqual({ id: sent.json.submissionId });
    expect(await alarmOf(room(c.id)), "nothing left to expire").toBeNull();
    // Followers hold nothing the queue lacks: the snapshot plus the events after it give the queue.
    expect(s.events.filter((e) => e.type === "queue.entry")).toEqual([]);
    await s.close();
  });
});
