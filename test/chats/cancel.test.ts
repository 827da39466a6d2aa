import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { holdD1 } from "../d1-calls";
import { admin, call, chatOf, chatsPath, creditsOf, expectProblem, newAccount, newChat, newToken, peek, queueOf, room, send, signIn, world } from "../helpers";
import { openEvents } from "../sse";
import { cancel, steer, submissionOf, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";

describe("cancelling a submission", () => {
  it("removes a queued entry for good: it never runs, is never charged, and its key answers submission_cancelled", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    await send(w, chat.id, "running");
    const key = crypto.randomUUID();
    const queued = await send(w, chat.id, "cancel me", key);
    expect(queued.json.disposition).toBe("queued");
    const id = queued.json.submissionId as string;
    expect((await chatOf(w, chat.id)).queuedCount).toBe(1);

    const r = await cancel(w, chat.id, id);
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe("");
    expect((await queueOf(w, chat.id)).items.map((e) => e.content)).toEqual(["running"]);
    expect((await chatOf(w, chat.id)).queuedCount).toBe(0);
    expect((await submissionOf(w, chat.id, id)).state).toMatchObject({ status: "cancelled", taskId: null, userMessageId: null, replyMessageId: null });
    expect((await cancel(w, chat.id, id)).status, "cancelling again").toBe(204);

    expectProblem(await send(w, chat.id, "cancel me", key), 409, "submission_cancelled");
    expectProblem(await send(w, chat.id, "something else", key), 409, "idempotency_key_reused");
    expectProblem(await steer(w, chat.id, "cancel me", key), 409, "idempotency_key_reused");

    await settle(room(chat.id), clock);
    const items = await peek(w, chat.id);
    expect(items.some((m) => m.content === "cancel me")).toBe(false);
    expect(items.filter((m) => m.role === "owner")).toHaveLength(1);
    expect(await creditsOf(w.account.id)).toBe(999);
    // Followers see the entry leave the queue and the count go down.
    await s.until((e) => e.type === "queue.removed" && e.data.id === id);
    await s.until((e) => e.type === "chat" && e.data.queuedCount === 0 && e.data.isWorking === true);
    await s.close();
  });

  it("removes a failed entry, also after its 24 hours, and its key then answers submission_cancelled", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const key = crypto.randomUUID();
    const sent = [await send(w, c.id, "no credits", key), await send(w, c.id, "nor for me")];
    await settle(room(c.id), clock);
    expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(["failed", "failed"]);
    expect((await send(w, c.id, "no credits", key)).status, "a failed entry's key replays").toBe(202);
    expect((await cancel(w, c.id, sent[0]!.json.submissionId)).status).toBe(204);
    expect((await queueOf(w, c.id)).items.map((e) => e.content)).toEqual(["nor for me"]);
    expectProblem(await send(w, c.id, "no credits", key), 409, "submission_cancelled");

    clock.advance(24 * 3_600_000 + 1);
    expect((await queueOf(w, c.id)).items).toEqual([]);
    expect((await cancel(w, c.id, sent[1]!.json.submissionId)).status).toBe(204);
    expect((await submissionOf(w, c.id, sent[1]!.json.submissionId)).state!.status).toBe("cancelled");
  });

  it("removes a steering entry: the running task never takes it", async ({ clock, w, chat }) => {
    await send(w, chat.id, "running");
    await runNextAlarm(room(chat.id), clock);
    const key = crypto.randomUUID();
    const st = await steer(w, chat.id, "never mind", key);
    expect((await queueOf(w, chat.id)).items.map((e) => [e.id, e.status])).toEqual([[st.json.submissionId, "steering"]]);
    expect((await cancel(w, chat.id, st.json.submissionId)).status).toBe(204);
    expect((await queueOf(w, chat.id)).items).toEqual([]);
    expectProblem(await steer(w, chat.id, "never mind", key), 409, "submission_cancelled");
    await settle(room(chat.id), clock);
    const items = await peek(w, chat.id);
    expect(items.map((m) => m.role)).toEqual(["owner", "user"]);
    expect(items[0]!.content).not.toContain("Noted");
    expect(await creditsOf(w.account.id)).toBe(999);
  });

  it("answers 409 submission_started once an entry is dispatching, running or done", async ({ clock, w, chat }) => {
    const first = await send(w, chat.id, "straight to the agent");
    expect(first.json.disposition).toBe("started");
    expectProblem(await cancel(w, chat.id, first.json.submissionId), 409, "submission_started");
    await runNextAlarm(room(chat.id), clock);
    await workingReply(w, chat.id);
    expectProblem(await cancel(w, chat.id, first.json.submissionId), 409, "submission_started");
    await settle(room(chat.id), clock);
    const r = await cancel(w, chat.id, first.json.submissionId);
    expectProblem(r, 409, "submission_started");
    expect(r.json.detail).toMatch(/stop its reply/);
  });

  it("wins over a dispatch that was waiting on D1 when the cancel came: the entry never runs", async ({ clock, w, chat }) => {
    expect((await admin("PUT", "/admin/maintenance", { enabled: true })).status).toBe(200);
    const sent = await send(w, chat.id, "held, then cancelled while the alarm asks D1");
    expect(sent.json.disposition).toBe("queued");
    expect((await admin("PUT", "/admin/maintenance", { enabled: false })).status).toBe(200);
    // The chat's copy of its project's state is stale after a minute: the alarm asks D1, and waits there.
    clock.advance(60_000);
    const held = holdD1(/"projects"/);
    const alarm = runDurableObjectAlarm(room(chat.id));
    await held.reached;
    expect((await cancel(w, chat.id, sent.json.submissionId)).status).toBe(204);
    held.release();
    await alarm;
    await settle(room(chat.id), clock);
    expect(await peek(w, chat.id)).toEqual([]);
    expect(await creditsOf(w.account.id)).toBe(1000);
    expect((await chatOf(w, chat.id)).isWorking).toBe(false);
  });

  it("is allowed on an archived chat", async () => {
    frozenClock();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "running");
    const queued = await send(w, c.id, "waiting");
    expect((await call("POST", `${chatsPath(w)}/${c.id}/archive`, { token: w.token })).status).toBe(200);
    expect((await cancel(w, c.id, queued.json.submissionId)).status).toBe(204);
  });

  it("answers 404 submission_not_found for what is no submission of this chat, and refuses callers who may not write", async () => {
    frozenClock();
    const w = await world();
    const c = await newChat(w);
    const other = await newChat(w);
    await send(w, c.id, "running");
    const queued = await send(w, c.id, "waiting");
    const id = queued.json.submissionId as string;
    for (const [chatId, submissionId] of [
      [c.id, crypto.randomUUID()],
      [c.id, "not-a-uuid"],
      [other.id, id],
    ]) {
      expectProblem(await cancel(w, chatId!, submissionId!), 404, "submission_not_found");
    }
    expectProblem(await cancel(w, crypto.randomUUID(), id), 404, "not_found");
    expectProblem(await cancel(w, c.id, id, (await world()).token), 404, "not_found");
    expectProblem(await cancel(w, c.id, id, await newToken(w.session, ["chat:read"])), 403, "insufficient_scope");
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    expectProblem(await cancel(w, c.id, id, await newToken(await signIn(viewer))), 403, "forbidden");
    expectProblem(await call("DELETE", `${chatsPath(w)}/${c.id}/queue/${id}`), 401, "unauthorized");
    expectProblem(await call("PUT", `${chatsPath(w)}/${c.id}/queue/${id}`, { token: w.token }), 405, "method_not_allowed");
    expect((await queueOf(w, c.id)).items.map((e) => e.id)).toContain(id);
  });
});
