import { describe, expect } from "vitest";
import { settle } from "../clock";
import { newChat, room, world } from "../helpers";
import { it } from "../fixtures/chat";
import { errorOf, resultOf, rpc, userMessage } from "./a2a-helpers";

type Listed = { tasks: { id: string; contextId: string; status: { state: string; timestamp: string } }[]; nextPageToken: string; totalSize: number; pageSize: number };

describe("ListTasks without contextId: the project's tasks across its chats", () => {
  it("lists every chat's tasks, newest status first, pages by key and filters by state; another project's are not there", async ({ clock, w }) => {
    const chats = [await newChat(w), await newChat(w)];
    const sent: string[] = [];
    for (const [i, text] of ["first", "/ask Your name?", "third"].entries()) {
      const chat = chats[i % 2]!;
      const { task } = await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage(text, { contextId: chat.id }), configuration: { returnImmediately: true } }));
      sent.push(task.id);
      clock.advance(1_000);
      await settle(room(chat.id), clock);
    }
    const other = await world();
    await resultOf(rpc(other.token, other.projectId, "SendMessage", { message: userMessage("theirs"), configuration: { returnImmediately: true } }));

    const all: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", {}));
    expect(all.totalSize).toBe(3);
    expect(all.tasks.map((t) => t.id)).toEqual([sent[2], sent[1], sent[0]]);
    expect(all.nextPageToken).toBe("");
    expect(all.tasks.map((t) => t.contextId)).toEqual([chats[0]!.id, chats[1]!.id, chats[0]!.id]);

    const waiting: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_INPUT_REQUIRED" }));
    expect(waiting.tasks.map((t) => t.id)).toEqual([sent[1]]);
    expect(waiting.totalSize).toBe(1);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_AUTH_REQUIRED" }))).tasks).toEqual([]);
    const after: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { statusTimestampAfter: all.tasks[1]!.status.timestamp }));
    expect(after.tasks.map((t) => t.id)).toEqual([sent[2], sent[1]]);

    // One a page: a task that appears between pages moves nothing among those that did not change.
    const first: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { pageSize: 1 }));
    expect(first.tasks.map((t) => t.id)).toEqual([sent[2]]);
    expect(first.totalSize).toBe(3);
    // (To the chat whose tasks have ended: a send to the other would supersede its question, and so change that task.)
    const { task: newer } = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: userMessage("newer", { contextId: chats[0]!.id }), configuration: { returnImmediately: true } }),
    );
    clock.advance(1_000);
    await settle(room(chats[0]!.id), clock);
    const second: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { pageSize: 1, pageToken: first.nextPageToken }));
    expect(second.tasks.map((t) => t.id)).toEqual([sent[1]]);
    expect(second.totalSize).toBe(4);
    const third: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { pageSize: 1, pageToken: second.nextPageToken }));
    expect(third.tasks.map((t) => t.id)).toEqual([sent[0]]);
    expect(third.nextPageToken).toBe("");
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { pageSize: 1 }))).tasks[0].id).toBe(newer.id);
  });

  it("a task's new state reaches the index with the chat list's hand-off", async ({ clock, w, chat }) => {
    const { task } = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: userMessage("/ask Your name?", { contextId: chat.id }), configuration: { returnImmediately: true } }),
    );
    await settle(room(chat.id), clock);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_INPUT_REQUIRED" }))).tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("Ada", { taskId: task.id }), configuration: { returnImmediately: true } }));
    await settle(room(chat.id), clock);
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_INPUT_REQUIRED" }))).tasks).toEqual([]);
    const done: Listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_COMPLETED" }));
    // The answer goes on with the task: still one task, now completed.
    expect(done.tasks.map((t) => t.id)).toEqual([task.id]);
    expect(done.totalSize).toBe(1);
  });

  it("a page token that is not one this server gave, or one of a chat's listing, is -32602; so is a status that is no state", async ({ clock, w, chat }) => {
    for (let i = 0; i < 2; i++)
      await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage(`m${i}`, { contextId: chat.id }), configuration: { returnImmediately: true } }));
    await settle(room(chat.id), clock);
    const ofChat = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageSize: 1 }));
    expect(ofChat.nextPageToken).not.toBe("");
    for (const pageToken of ["nope", ofChat.nextPageToken, btoa("k:1:not-a-task")]) {
      expect((await errorOf(rpc(w.token, w.projectId, "ListTasks", { pageToken }))).code).toBe(-32602);
    }
    const ofProject = await resultOf(rpc(w.token, w.projectId, "ListTasks", { pageSize: 1 }));
    expect((await errorOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id, pageToken: ofProject.nextPageToken }))).code).toBe(-32602);
    const state = await errorOf(rpc(w.token, w.projectId, "ListTasks", { status: "TASK_STATE_SLEEPING" }));
    expect(state.code).toBe(-32602);
  });
});
