import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { MIGRATIONS } from "../../src/chats/room/room-schema";
import { FAILED_KEPT_ENTRIES } from "../../src/chats/room/submission-storage";
import { migrateSchema } from "../../src/db/object-schema";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatsPath, historyOf, queueOf, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { stop, stopped, submissionOf } from "./control-helpers";
import { chatNow, questionOf } from "./question-helpers";
import { it } from "../fixtures/chat";

describe("a chat object stored by the release before control of work", () => {
  it("links the task running at the upgrade, leaves earlier messages unlinked, and counts its waiting entries for the queue bound", async ({ clock, w }) => {
    const chatId = crypto.randomUUID();
    const [done, failed, running, waiting] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const [taskA, taskB, taskC] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const [userA, replyA, errorB, userC, replyC] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const at = new Date(clock.now()).toISOString();
    // What schema version 3 held: a finished task (its user message without a task id), one that failed for want of
    // credits, one running (its user message written just before its reply), and an entry waiting.
    await runInDurableObject(room(chatId), (_: ChatRoom, state) => {
      const sql = state.storage.sql;
      migrateSchema(sql, MIGRATIONS.slice(0, 3));
      sql.exec("INSERT INTO chat (id, project_id, title, created_at, updated_at, version) VALUES (?, ?, 'old chat', ?, ?, 1)", chatId, w.projectId, at, at);
      const submission =
        "INSERT INTO submissions (id, idempotency_key, content, reply_to, disposition, status, created_at, task_id, failed_at, account_id) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)";
      sql.exec(submission, done, crypto.randomUUID(), "first", "started", "done", at, taskA, null, w.account.id);
      sql.exec(submission, failed, crypto.randomUUID(), "second", "queued", "failed", at, taskB, clock.now(), w.account.id);
      sql.exec(submission, running, crypto.randomUUID(), "third", "queued", "running", at, taskC, null, w.account.id);
      sql.exec(submission, waiting, crypto.randomUUID(), "€".repeat(1000), "queued", "queued", at, null, null, null);
      const message = "INSERT INTO messages (id, role, content, created_at, status, task_id) VALUES (?, ?, ?, ?, ?, ?)";
      sql.exec(message, userA, "user", "first", at, null, null);
      sql.exec(message, replyA, "owner", "Done.", at, "success", taskA);
      sql.exec(message, errorB, "error", "Not enough credits.", at, null, taskB);
      sql.exec(message, userC, "user", "third", at, null, null);
      sql.exec(message, replyC, "owner", "Half", at, "working", taskC);
      sql.exec(
        "INSERT INTO tasks (id, submission_id, owner_message_id, started_at, check_at, partials) VALUES (?, ?, ?, ?, ?, 0)",
        taskC,
        running,
        replyC,
        clock.now(),
        clock.now(),
      );
    });
    await evictDurableObject(room(chatId));

    const items = (await historyOf(w, chatId)).items;
    expect(items.map((m) => [m.id, m.taskId, m.submissionId])).toEqual([
      [replyC, taskC, running],
      [userC, taskC, running],
      [errorB, taskB, null],
      [replyA, taskA, null],
      [userA, null, null],
    ]);
    expect((await submissionOf(w, chatId, running)).state).toMatchObject({ status: "running", taskId: taskC, userMessageId: userC, replyMessageId: replyC });
    expect((await submissionOf(w, chatId, done)).state).toMatchObject({ status: "done", taskId: taskA, userMessageId: null, replyMessageId: null });
    const load = await room(chatId).queueLoad();
    expect(load).toEqual({ entries: 1, bytes: 3000 });

    // It goes on: the running task can be stopped, the waiting entry runs, and a new message is linked from the start.
    expect(stopped(await stop(w, chatId, replyC))).toMatchObject({ status: "interrupted_by_user", content: "Half", submissionId: running });
    const sent = await send(w, chatId, "fourth");
    expect(sent.status).toBe(202);
    await settle(room(chatId), clock);
    expect((await queueOf(w, chatId)).items.map((e) => e.status)).toEqual(["failed"]);
    expect((await historyOf(w, chatId)).items.filter((m) => m.submissionId === sent.json.submissionId).map((m) => m.role)).toEqual(["owner", "user"]);
  });
});

describe("a chat object stored before queue changes became entry events", () => {
  it("gives a resume point from before a snapshot, keeps the failed entries of the last day and announces their end", async ({ clock, w }) => {
    const chatId = crypto.randomUUID();
    const [recent, old] = [crypto.randomUUID(), crypto.randomUUID()];
    const at = new Date(clock.now()).toISOString();
    await runInDurableObject(room(chatId), (_: ChatRoom, state) => {
      const sql = state.storage.sql;
      migrateSchema(sql, MIGRATIONS.slice(0, 4));
      // Listed already: the chat list holds this version.
      sql.exec("INSERT INTO chat (id, project_id, title, created_at, updated_at, version, indexed_version) VALUES (?, ?, 'old chat', ?, ?, 1, 1)", chatId, w.projectId, at, at);
      const failed = "INSERT INTO submissions (id, idempotency_key, content, disposition, status, created_at, failed_at) VALUES (?, ?, ?, 'queued', 'failed', ?, ?)";
      sql.exec(failed, recent, crypto.randomUUID(), "failed an hour ago", at, clock.now() - 3_600_000);
      sql.exec(failed, old, crypto.randomUUID(), "failed two days ago", at, clock.now() - 48 * 3_600_000);
      // The old shape: the whole queue in one event.
      for (let i = 0; i < 3; i++) sql.exec("INSERT INTO events (type, data, at) VALUES ('queue', '{\"items\":[]}', ?)", clock.now());
    });
    await evictDurableObject(room(chatId));

    expect((await queueOf(w, chatId)).items.map((e) => e.id)).toEqual([recent]);
    const load = await runInDurableObject(room(chatId), (_: ChatRoom, state) =>
      state.storage.sql.exec<{ content_bytes: number }>("SELECT content_bytes FROM submissions WHERE id = ?", recent).one(),
    );
    expect(load.content_bytes).toBe("failed an hour ago".length);
    const path = `${chatsPath(w)}/${chatId}/events`;
    const across = await openEvents(`${path}?after=2`, w.token);
    const snapshot = await across.next();
    expect(snapshot.type, "no replay across the change of shape").toBe("snapshot");
    expect(snapshot.data.queue.items.map((e: { id: string }) => e.id)).toEqual([recent]);
    // Woken, the chat first tells its list of the tasks it had (the task index, half a second later), then its alarm is the
    // entry's 24 hours; at them followers hear it leave, and only it.
    const opened = clock.now();
    expect(await runNextAlarm(room(chatId), clock)).toBe(true);
    const expiry = (await alarmOf(room(chatId)))!;
    expect(expiry).toBe(opened - 3_600_000 + 24 * 3_600_000);
    expect(await runNextAlarm(room(chatId), clock)).toBe(true);
    const removed = await across.until((e) => e.type === "queue.removed");
    expect(removed.data).toEqual({ id: recent });
    expect(across.events.filter((e) => e.type === "queue.removed")).toHaveLength(1);
    await across.close();
    // The last event of the old shape is no resume point either: a follower there may hold entries that left unannounced.
    const atLastOld = await openEvents(`${path}?after=3`, w.token);
    expect((await atLastOld.next()).type).toBe("snapshot");
    await atLastOld.close();
    // From the first event of the new shape on, a resume goes on with what follows.
    const from = await openEvents(`${path}?after=${removed.id}`, w.token);
    expect((await send(w, chatId, "after the upgrade")).status).toBe(202);
    const next = await from.next();
    expect(next.type).not.toBe("snapshot");
    expect(next.id).toBe(removed.id + 1);
    await from.close();
  });
});

describe("a chat object upgraded to entry events holding more failed entries than the queue keeps", () => {
  it("keeps the newest within the bound, and a resume point from before gets a snapshot", async ({ w }) => {
    const chatId = crypto.randomUUID();
    const extra = 5;
    const ids: string[] = [];
    await runInDurableObject(room(chatId), (_: ChatRoom, state) => {
      const sql = state.storage.sql;
      migrateSchema(sql, MIGRATIONS.slice(0, 5));
      const at = new Date().toISOString();
      sql.exec("INSERT INTO chat (id, project_id, title, created_at, updated_at, version) VALUES (?, ?, 'old chat', ?, ?, 1)", chatId, w.projectId, at, at);
      const failed =
        "INSERT INTO submissions (id, idempotency_key, content, content_bytes, disposition, status, created_at, failed_at) VALUES (?, ?, 'f', 1, 'queued', 'failed', ?, ?)";
      for (let i = 0; i < FAILED_KEPT_ENTRIES + extra; i++) {
        ids.push(crypto.randomUUID());
        sql.exec(failed, ids[i], crypto.randomUUID(), at, Date.now() - 7_200_000 + i * 1000);
      }
      for (let i = 1; i <= 2; i++) sql.exec("INSERT INTO events (id, type, data, at, end_offset) VALUES (?, 'chat', '{}', ?, ?)", i, Date.now(), i * 30);
    });
    await evictDurableObject(room(chatId));

    expect((await queueOf(w, chatId)).items.map((e) => e.id)).toEqual(ids.slice(extra));
    const s = await openEvents(`${chatsPath(w)}/${chatId}/events?after=1`, w.token);
    const snapshot = await s.next();
    expect(snapshot.type).toBe("snapshot");
    expect(snapshot.data.queue.items).toHaveLength(FAILED_KEPT_ENTRIES);
    await s.close();
  });
});

describe("a chat object stored before credits and usage were kept", () => {
  it("shows no usage on earlier replies, says why an earlier submission failed, and ends the task running at the upgrade with what it paid", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 10 });
    const chatId = crypto.randomUUID();
    const [failed, running] = [crypto.randomUUID(), crypto.randomUUID()];
    const [taskB, taskC] = [crypto.randomUUID(), crypto.randomUUID()];
    const [errorB, userC, replyC] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const at = new Date(clock.now()).toISOString();
    await runInDurableObject(room(chatId), (_: ChatRoom, state) => {
      const sql = state.storage.sql;
      migrateSchema(sql, MIGRATIONS.slice(0, 7));
      sql.exec("INSERT INTO chat (id, project_id, title, created_at, updated_at, version) VALUES (?, ?, 'old chat', ?, ?, 1)", chatId, w.projectId, at, at);
      const submission = `INSERT INTO submissions (id, idempotency_key, content, reply_to, disposition, status, created_at, task_id, failed_at, account_id,
        user_message_id, reply_message_id) VALUES (?, ?, ?, NULL, 'queued', ?, ?, ?, ?, ?, ?, ?)`;
      sql.exec(submission, failed, crypto.randomUUID(), "no credits then", "failed", at, taskB, clock.now(), w.account.id, null, null);
      sql.exec(submission, running, crypto.randomUUID(), "running then", "running", at, taskC, null, w.account.id, userC, replyC);
      const message = "INSERT INTO messages (id, role, content, created_at, status, task_id, submission_id) VALUES (?, ?, ?, ?, ?, ?, ?)";
      sql.exec(message, errorB, "error", "Not enough credits.", at, null, taskB, failed);
      sql.exec(message, userC, "user", "running then", at, null, taskC, running);
      sql.exec(message, replyC, "owner", "Half", at, "working", taskC, running);
      sql.exec("INSERT INTO tasks (id, submission_id, owner_message_id, started_at, check_at) VALUES (?, ?, ?, ?, ?)", taskC, running, replyC, clock.now(), clock.now());
    });
    await evictDurableObject(room(chatId));

    expect((await historyOf(w, chatId)).items.map((m) => m.usage)).toEqual([null, null, null]);
    expect((await submissionOf(w, chatId, failed)).state).toMatchObject({
      status: "failed",
      credits: { charged: 0, refunded: 0 },
      failure: { code: "insufficient_credits", message: "Not enough credits." },
    });
    const ended = stopped(await stop(w, chatId, replyC));
    expect(ended.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
    await settle(room(chatId), clock);
    const usage = (await call("GET", `/v1/projects/${w.projectId}/usage`, { token: w.token })).json.items;
    expect(usage.map((d: { tasks: number; credits: number }) => [d.tasks, d.credits])).toEqual([[1, 1]]);
  });
});

describe("a chat object stored before questions were typed", () => {
  it("turns a chat awaiting the user into a pending text question asked by its last reply; a chat not awaiting gets none", async ({ clock, w }) => {
    const [awaiting, idle] = [crypto.randomUUID(), crypto.randomUUID()];
    const [task, reply] = [crypto.randomUUID(), crypto.randomUUID()];
    // A reply longer than a prompt, counted in code points: 3,990 emoji and then plain text.
    const content = `${"😀".repeat(3_990)}${"q".repeat(100)}`;
    const at = new Date(clock.now()).toISOString();
    for (const chatId of [awaiting, idle]) {
      await runInDurableObject(room(chatId), (_: ChatRoom, state) => {
        const sql = state.storage.sql;
        // The schema before questions (its tenth version).
        migrateSchema(sql, MIGRATIONS.slice(0, 9));
        sql.exec(
          "INSERT INTO chat (id, project_id, title, created_at, updated_at, version, awaiting_user) VALUES (?, ?, 'old chat', ?, ?, 1, ?)",
          chatId,
          w.projectId,
          at,
          at,
          chatId === awaiting ? 1 : 0,
        );
        const message = "INSERT INTO messages (id, role, content, created_at, status, task_id) VALUES (?, ?, ?, ?, ?, ?)";
        sql.exec(message, crypto.randomUUID(), "user", "ask me", at, null, task);
        sql.exec(message, chatId === awaiting ? reply : crypto.randomUUID(), "owner", content, at, "success", task);
      });
      await evictDurableObject(room(chatId));
    }

    expect(await chatNow(w, idle)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
    const chat = await chatNow(w, awaiting);
    expect(chat).toMatchObject({ isAwaitingUser: true, pendingQuestionId: expect.any(String) });
    const q = await questionOf(w, awaiting, chat.pendingQuestionId!);
    expect(q).toMatchObject({ chatId: awaiting, taskId: task, messageId: reply, kind: "text", status: "pending", allowText: true, options: null, answer: null });
    expect(q.prompt).toBe(`${"😀".repeat(3_990)}${"q".repeat(10)}`);
    expect(Date.parse(q.expiresAt) - Date.parse(q.createdAt)).toBe(168 * 3_600_000);
    expect((await historyOf(w, awaiting)).items.map((m) => m.questionId)).toEqual([q.id, null]);
    // The rule holds for it as for any: a send answers it with its text.
    const sent = await send(w, awaiting, "here is my answer");
    expect(await questionOf(w, awaiting, q.id)).toMatchObject({ status: "answered", answer: { text: "here is my answer" }, submissionId: sent.json.submissionId });
    expect(await chatNow(w, awaiting)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
  });
});
