import { describe, expect } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { admin, call, chatOf, chatsPath, creditsOf, expectProblem, historyOf, newAccount, newChat, newToken, peek, room, send, signIn, world } from "../helpers";
import { openEvents } from "../sse";
import { stop, stopped, workingReply } from "./control-helpers";
import { it } from "../fixtures/chat";

describe("stopping a reply", () => {
  it("ends a working reply at once as interrupted_by_user, keeping exactly what it had written", async ({ clock, w, chat }) => {
    const s = await openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token);
    await s.next();
    await send(w, chat.id, "write a long answer");
    await runNextAlarm(room(chat.id), clock); // the task starts
    await runNextAlarm(room(chat.id), clock); // its first part
    const reply = await workingReply(w, chat.id);
    expect(reply.content.length).toBeGreaterThan(0);

    const r = await stop(w, chat.id, reply.id);
    expect(r.status, r.text).toBe(200);
    expect(stopped(r)).toEqual({ ...reply, status: "interrupted_by_user", usage: { credits: 1, inputTokens: null, outputTokens: null } });
    expect((await chatOf(w, chat.id)).isWorking).toBe(false);

    // The agent's time runs out: nothing more is appended, and the status holds.
    expect(await settle(room(chat.id), clock)).toBeLessThanOrEqual(1);
    expect((await peek(w, chat.id)).find((m) => m.id === reply.id)).toEqual(stopped(r));
    // Credits taken for the task are not returned.
    expect(await creditsOf(w.account.id)).toBe(999);

    const end = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "interrupted_by_user");
    expect(end.data).toEqual(stopped(r));
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === reply.id);
    expect(deltas.map((e) => e.data.text).join("")).toBe(reply.content);
    expect(deltas.every((e) => e.id < end.id)).toBe(true);
    await s.until((e) => e.type === "chat" && e.id > end.id && e.data.isWorking === false);
    await s.close();
  });

  it("answers a reply that has ended as it is, so a retried or late stop changes nothing", async ({ clock, w, chat }) => {
    await send(w, chat.id, "finish by yourself");
    await settle(room(chat.id), clock);
    const [done] = await peek(w, chat.id);
    expect(done!.status).toBe("success");
    const late = await stop(w, chat.id, done!.id);
    expect(late.status).toBe(200);
    expect(stopped(late)).toEqual(done);

    await send(w, chat.id, "stop me twice");
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    const [a, b] = await Promise.all([stop(w, chat.id, reply.id), stop(w, chat.id, reply.id)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json).toEqual(b.json);
    expect(stopped(a).status).toBe("interrupted_by_user");
    const interrupted = await call("GET", `${chatsPath(w)}/${chat.id}/messages?limit=100`, { token: w.token });
    expect(interrupted.json.items.filter((m: { status: string }) => m.status === "interrupted_by_user")).toHaveLength(1);
  });

  it("lets the next queued submission run, and a steer right after it starts at once", async ({ clock, w, chat }) => {
    await send(w, chat.id, "first");
    expect((await send(w, chat.id, "second")).json.disposition).toBe("queued");
    await runNextAlarm(room(chat.id), clock);
    expect((await stop(w, chat.id, (await workingReply(w, chat.id)).id)).status).toBe(200);
    await settle(room(chat.id), clock);
    const items = (await historyOf(w, chat.id)).items;
    expect(items.map((m) => [m.role, m.content.startsWith("Done.") ? "reply" : m.content, m.status])).toEqual([
      ["owner", "reply", "success"],
      ["user", "second", null],
      ["owner", "", "interrupted_by_user"],
      ["user", "first", null],
    ]);

    await send(w, chat.id, "third");
    await runNextAlarm(room(chat.id), clock);
    expect((await stop(w, chat.id, (await workingReply(w, chat.id)).id)).status).toBe(200);
    const after = await call("POST", `${chatsPath(w)}/${chat.id}/steer`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "now" } });
    expect(after.status, after.text).toBe(202);
    expect(after.json.disposition).toBe("started");
  });

  it("is allowed on an archived chat", async ({ clock, w, chat }) => {
    await send(w, chat.id, "archive me while I work");
    await runNextAlarm(room(chat.id), clock);
    const reply = await workingReply(w, chat.id);
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    const r = await stop(w, chat.id, reply.id);
    expect(r.status, r.text).toBe(200);
    expect(stopped(r).status).toBe("interrupted_by_user");
  });

  it("takes no body, an empty one, or {}; anything else is a 400", async ({ clock, w, chat }) => {
    await send(w, chat.id, "hello");
    await settle(room(chat.id), clock);
    const [reply] = await peek(w, chat.id);
    expect((await stop(w, chat.id, reply!.id)).status).toBe(200);
    expect((await stop(w, chat.id, reply!.id, w.token, { body: {} })).status).toBe(200);
    expect((await stop(w, chat.id, reply!.id, w.token, { raw: "", headers: { "content-type": "application/json" } })).status).toBe(200);
    expectProblem(await stop(w, chat.id, reply!.id, w.token, { body: { force: true } }), 400, "invalid_request");
    expectProblem(await stop(w, chat.id, reply!.id, w.token, { raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expectProblem(await stop(w, chat.id, reply!.id, w.token, { raw: "stop", headers: { "content-type": "text/plain" } }), 400, "invalid_request");
  });

  it("refuses what is not an agent reply of this chat with 404 message_not_found, and callers who may not write", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 1 });
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await settle(room(c.id), clock);
    await send(w, c.id, "no credits left for this one");
    await settle(room(c.id), clock);
    const items = await peek(w, c.id);
    const reply = items.find((m) => m.role === "owner")!;
    const user = items.find((m) => m.role === "user")!;
    const error = items.find((m) => m.role === "error")!;
    const other = await newChat(w);
    for (const [chatId, messageId, what] of [
      [c.id, user.id, "a user message"],
      [c.id, error.id, "an error message"],
      [c.id, crypto.randomUUID(), "an unknown id"],
      [c.id, "not-a-uuid", "a malformed id"],
      [other.id, reply.id, "another chat's reply"],
    ]) {
      const r = await stop(w, chatId!, messageId!);
      expectProblem(r, 404, "message_not_found");
      expect(r.json.detail, what).toBeTruthy();
    }
    expectProblem(await stop(w, crypto.randomUUID(), reply.id), 404, "not_found");
    expectProblem(await stop((await world()) as typeof w, c.id, reply.id, (await world()).token), 404, "not_found");
    expectProblem(await stop(w, c.id, reply.id, await newToken(w.session, ["chat:read"])), 403, "insufficient_scope");
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    expectProblem(await stop(w, c.id, reply.id, await newToken(await signIn(viewer))), 403, "forbidden");
    expectProblem(await call("POST", `${chatsPath(w)}/${c.id}/messages/${reply.id}/stop`), 401, "unauthorized");
    expectProblem(await call("GET", `${chatsPath(w)}/${c.id}/messages/${reply.id}/stop`, { token: w.token }), 405, "method_not_allowed");
  });
});
