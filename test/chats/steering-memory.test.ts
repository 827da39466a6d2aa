import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import type { RoomStorage } from "../../src/chats/room/room-storage";
import type { SubmissionRow, SubmissionStorage } from "../../src/chats/room/submission-storage";
import { runNextAlarm } from "../clock";
import { room, send } from "../helpers";
import { steer } from "./control-helpers";
import { it } from "../fixtures/chat";

describe("the running task's steering texts in memory", () => {
  it("are read afresh after an eviction without counting the one being taken twice", async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock);
    await steer(w, chat.id, "first");
    await steer(w, chat.id, "second");
    await evictDurableObject(room(chat.id));
    const taken = await runInDurableObject(room(chat.id), (r: ChatRoom) => {
      const { store, submissions } = r as unknown as { store: RoomStorage; submissions: SubmissionStorage };
      const task = store.runningTask()!;
      for (const row of submissions.steeringWaiting(5) as SubmissionRow[]) submissions.takeSteering(row, task, crypto.randomUUID());
      return [...submissions.steeringTaken(task)];
    });
    expect(taken).toEqual(["first", "second"]);
  });
});
