import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { QuestionStorage } from "../../src/chats/room/question-storage";
import { RoomStorage } from "../../src/chats/room/room-storage";
import { type SubmissionRow, SubmissionStorage } from "../../src/chats/room/submission-storage";
import { WebhookOutbox } from "../../src/chats/room/webhook-outbox";
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
    // The storage parts as the object builds them when it starts again: nothing of the chat in memory.
    const taken = await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const sql = state.storage.sql;
      const submissions = new SubmissionStorage(sql);
      const store = new RoomStorage(sql, submissions, new QuestionStorage(sql, new WebhookOutbox(sql), 3_600_000));
      const task = store.runningTask()!;
      for (const row of submissions.steeringWaiting(5) as SubmissionRow[]) submissions.takeSteering(row, task, crypto.randomUUID());
      return [...submissions.steeringTaken(task)];
    });
    expect(taken).toEqual(["first", "second"]);
  });
});
