import { describe, expect } from "vitest";
import { ALARM_STEPS } from "../../src/chats/limits";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { chatOf, historyOf, newChat, queueOf, replies, room, send, world } from "../helpers";
import { it } from "../fixtures/chat";

describe("the queue", () => {
  it("queues the next message while the agent works and runs them in order", async ({ clock, w, chat }) => {
    const sent = [await send(w, chat.id, "one"), await send(w, chat.id, "two"), await send(w, chat.id, "three")];
    expect(sent.map((r) => r.json.disposition)).toEqual(["started", "queued", "queued"]);

    await runNextAlarm(room(chat.id), clock); // the first task starts
    const q = await queueOf(w, chat.id);
    expect(q.items.map((e) => [e.id, e.content, e.status])).toEqual([
      [sent[1]!.json.submissionId, "two", "queued"],
      [sent[2]!.json.submissionId, "three", "queued"],
    ]);
    expect(q.items.every((e) => /Z$/.test(e.createdAt))).toBe(true);
    expect(await chatOf(w, chat.id)).toMatchObject({ isWorking: true, queuedCount: 2 });

    await settle(room(chat.id), clock);
    const page = await historyOf(w, chat.id);
    expect(replies(page)).toHaveLength(3);
    expect(page.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["three", "two", "one"]);
    expect(page.items.map((m) => m.role)).toEqual(["owner", "user", "owner", "user", "owner", "user"]);
    expect((await queueOf(w, chat.id)).items).toEqual([]);
    expect(await chatOf(w, chat.id)).toMatchObject({ isWorking: false, queuedCount: 0 });
  });

  it("goes on in the next alarm when one alarm's steps run out with entries left", async () => {
    const clock = frozenClock();
    // No credits: each entry fails the moment it is dispatched, so one alarm could take them all.
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const entries = ALARM_STEPS + 5;
    for (let i = 0; i < entries; i++) {
      if (i > 0 && i % 50 === 0) clock.advance(60_001); // a new minute of the token's budget
      expect((await send(w, c.id, `entry ${i}`)).status).toBe(202);
    }
    expect(await runNextAlarm(room(c.id), clock)).toBe(true);
    expect((await chatOf(w, c.id)).queuedCount).toBeGreaterThan(0);
    expect(await alarmOf(room(c.id)), "an alarm for the rest").not.toBeNull();
    await settle(room(c.id), clock);
    expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(Array(entries).fill("failed"));
    expect(await chatOf(w, c.id)).toMatchObject({ isWorking: false, queuedCount: 0 });
  });
});
