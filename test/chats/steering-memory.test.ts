import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ChatRoom } from "../../src/chats/chat-room";
import type { RoomStorage } from "../../src/chats/room-storage";
import type { SubmissionRow, SubmissionStorage } from "../../src/chats/submission-storage";
import { frozenClock, runNextAlarm } from "../clock";
import { newChat, room, send, world } from "../helpers";
import { steer } from "./control-helpers";

describe("the running task's steering texts in memory", () => {
  it("are read afresh after an eviction without counting the one being taken twice", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "running");
    await runNextAlarm(room(c.id), clock);
    await steer(w, c.id, "first");
    await steer(w, c.id, "second");
    await evictDurableObject(room(c.id));
    const taken = await runInDurableObject(room(c.id), (r: ChatRoom) => {
      const { store, submissions } = r as unknown as { store: RoomStorage; submissions: SubmissionStorage };
      const task = store.runningTask()!;
      for (const row of submissions.steeringWaiting(5) as SubmissionRow[]) submissions.takeSteering(row, task, crypto.randomUUID());
      return [...submissions.steeringTaken(task)];
    });
    expect(taken).toEqual(["first", "second"]);
  });
});
