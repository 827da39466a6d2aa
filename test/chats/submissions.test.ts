import { describe, expect } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { chatsPath, call, expectProblem, newChat, newToken, peek, room, send, world } from "../helpers";
import { submissionOf } from "./control-helpers";
import { it } from "../fixtures/chat";

describe("from a submission to its reply", () => {
  it("tells what a submission became at each step, and its messages point back to it", async ({ clock, w, chat }) => {
    const first = await send(w, chat.id, "first");
    const second = await send(w, chat.id, "second");
    const id = second.json.submissionId as string;
    expect((await submissionOf(w, chat.id, first.json.submissionId)).state).toMatchObject({ status: "dispatching", taskId: null });
    const queued = (await submissionOf(w, chat.id, id)).state!;
    expect(queued).toEqual({
      id,
      status: "queued",
      taskId: null,
      userMessageId: null,
      replyMessageId: null,
      createdAt: expect.stringMatching(/Z$/),
      credits: { charged: 0, refunded: 0 },
      failure: null,
      ifBusy: "queue",
    });

    await runNextAlarm(room(chat.id), clock);
    const running = (await submissionOf(w, chat.id, first.json.submissionId)).state!;
    expect(running.status).toBe("running");
    const [reply, user] = await peek(w, chat.id);
    expect(running).toMatchObject({ taskId: reply!.taskId, userMessageId: user!.id, replyMessageId: reply!.id });
    expect(user).toMatchObject({ role: "user", taskId: running.taskId, submissionId: first.json.submissionId });
    expect(reply).toMatchObject({ role: "owner", taskId: running.taskId, submissionId: first.json.submissionId });

    await settle(room(chat.id), clock);
    const done = (await submissionOf(w, chat.id, id)).state!;
    expect(done.status).toBe("done");
    const messages = await peek(w, chat.id);
    expect(messages.filter((m) => m.submissionId === id).map((m) => [m.role, m.id])).toEqual([
      ["owner", done.replyMessageId],
      ["user", done.userMessageId],
    ]);
    expect(messages.filter((m) => m.submissionId === id).every((m) => m.taskId === done.taskId)).toBe(true);
  });

  it("says failed for a submission that could not start, and links its error message", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const sent = await send(w, c.id, "no credits");
    await settle(room(c.id), clock);
    const state = (await submissionOf(w, c.id, sent.json.submissionId)).state!;
    expect(state).toMatchObject({ status: "failed", userMessageId: null, replyMessageId: null });
    const [error] = await peek(w, c.id);
    expect(error).toMatchObject({ role: "error", submissionId: sent.json.submissionId, taskId: state.taskId });
  });

  it("answers 404 submission_not_found for what is no submission of this chat, and needs only chat:read", async () => {
    frozenClock();
    const w = await world();
    const c = await newChat(w);
    const other = await newChat(w);
    const sent = await send(w, c.id, "hello");
    const reader = await newToken(w.session, ["chat:read"]);
    const path = (chatId: string, id: string) => `${chatsPath(w)}/${chatId}/submissions/${id}`;
    expect((await call("GET", path(c.id, sent.json.submissionId), { token: reader })).status).toBe(200);
    expect((await call("GET", path(c.id, sent.json.submissionId.toUpperCase()), { token: reader })).status, "ids in any case").toBe(200);
    for (const [chatId, id] of [
      [c.id, crypto.randomUUID()],
      [c.id, "nope"],
      [other.id, sent.json.submissionId],
    ]) {
      expectProblem(await call("GET", path(chatId!, id!), { token: reader }), 404, "submission_not_found");
    }
    expectProblem(await call("GET", path(crypto.randomUUID(), sent.json.submissionId), { token: reader }), 404, "not_found");
    expectProblem(await call("GET", path(c.id, sent.json.submissionId), { token: (await world()).token }), 404, "not_found");
    expectProblem(await call("GET", path(c.id, sent.json.submissionId), { token: await newToken(w.session, ["chat:write"]) }), 403, "insufficient_scope");
    expectProblem(await call("GET", path(c.id, sent.json.submissionId)), 401, "unauthorized");
    expectProblem(await call("DELETE", path(c.id, sent.json.submissionId), { token: w.token }), 405, "method_not_allowed");
  });
});

describe("the control calls and the rate limit", () => {
  it("count one request each, carry the rate-limit headers, and answer 429 past the limit", async () => {
    frozenClock();
    const w = await world();
    const c = await newChat(w);
    const left = (r: { headers: Headers }) => Number(/r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]);
    const sent = await send(w, c.id, "running");
    const calls = [
      () => call("POST", `${chatsPath(w)}/${c.id}/steer`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "steer" } }),
      () => call("GET", `${chatsPath(w)}/${c.id}/submissions/${sent.json.submissionId}`, { token: w.token }),
      () => call("DELETE", `${chatsPath(w)}/${c.id}/queue/${sent.json.submissionId}`, { token: w.token }),
      () => call("POST", `${chatsPath(w)}/${c.id}/messages/${crypto.randomUUID()}/stop`, { token: w.token }),
    ];
    let before = left(sent);
    for (const make of calls) {
      const r = await make();
      expect(r.headers.get("ratelimit-policy")).toBeTruthy();
      expect(left(r)).toBe(before - 1);
      before = left(r);
    }
    while (before > 0) before = left(await call("GET", `${chatsPath(w)}/${c.id}`, { token: w.token }));
    for (const make of calls) expectProblem(await make(), 429, "rate_limited");
  });
});
