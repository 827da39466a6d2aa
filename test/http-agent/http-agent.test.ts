import { evictDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { alarmOf, frozenClock, runNextAlarm, settle, type Clock } from "../clock";
import { call, creditsOf, expectProblem, newChat, peek, room, send, world, type World } from "../helpers";
import { fakeAgent } from "./fake-agent";

/** Runs the chat's alarms until none is left; the messages, newest first. */
async function settled(w: World, chatId: string, clock: Clock) {
  await settle(room(chatId), clock);
  return peek(w, chatId);
}
const callback = (chatId: string, taskId: string, body: unknown, secret = "agent-test-secret") =>
  call("POST", `/agent/chats/${chatId}/tasks/${taskId}/result`, { token: secret, body });

describe("http agent adapter", () => {
  it("posts the task with the secret and stores a result given at once", async () => {
    const clock = frozenClock();
    const calls = fakeAgent(() => Response.json({ status: "success", content: "Blue it is." }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "Make it blue");
    const items = await settled(w, c.id, clock);
    expect(items[0]).toMatchObject({ role: "owner", status: "success", content: "Blue it is." });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.authorization).toBe("Bearer agent-test-secret");
    expect(calls[0]!.body).toMatchObject({ chatId: c.id, projectId: w.projectId, content: "Make it blue", taskId: items[0]!.taskId });
    expect(calls[0]!.body.callbackUrl).toBe(`https://api.example.test/agent/chats/${c.id}/tasks/${items[0]!.taskId}/result`);
  });

  it("takes the callback address from PUBLIC_URL, never from a forged Host", async () => {
    const clock = frozenClock();
    const calls = fakeAgent(() => Response.json({ status: "success", content: "ok" }));
    const w = await world();
    const c = await newChat(w);
    const forged = new Request(`https://attacker.example/v1/projects/${w.projectId}/chats/${c.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${w.token}`, "idempotency-key": crypto.randomUUID(), "content-type": "application/json", host: "attacker.example" },
      body: JSON.stringify({ content: "Send my result elsewhere" }),
    });
    expect((await exports.default.fetch(forged)).status).toBe(202);
    const items = await settled(w, c.id, clock);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body.callbackUrl).toBe(`https://api.example.test/agent/chats/${c.id}/tasks/${items[0]!.taskId}/result`);
  });

  it("waits for the agent's callback, also across an eviction, and accepts it once", async () => {
    const clock = frozenClock();
    fakeAgent(() => new Response(null, { status: 202 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "Take your time");
    await runNextAlarm(room(c.id), clock);
    const working = (await peek(w, c.id))[0]!;
    expect(working).toMatchObject({ role: "owner", status: "working", taskId: expect.any(String) });
    await evictDurableObject(room(c.id));
    expectProblem(await callback(c.id, working.taskId!, { status: "success", content: "x" }, "wrong-secret"), 401, "unauthorized");
    expectProblem(await callback(c.id, crypto.randomUUID(), { status: "success", content: "x" }), 404, "not_found");
    expectProblem(await callback(c.id, working.taskId!, { status: "great" }), 400, "invalid_request");
    expect((await callback(c.id, working.taskId!, { status: "success", content: "Finished later." })).status).toBe(204);
    expect((await callback(c.id, working.taskId!, { status: "success", content: "Again." })).status).toBe(204);
    const items = await peek(w, c.id);
    expect(items.find((m) => m.id === working.id)).toMatchObject({ status: "success", content: "Finished later." });
    expect((await call("GET", `/v1/projects/${w.projectId}/chats/${c.id}`, { token: w.token })).json.isWorking).toBe(false);
  });

  it.each([
    [
      "throws",
      () => {
        throw new TypeError("network down");
      },
    ],
    ["answers garbage", () => new Response("<html>oops</html>", { status: 200 })],
    ["answers 500", () => new Response("boom", { status: 500 })],
    // Storage would keep U+FFFD for the lone half, so the reply shown would not be the one given.
    ["answers a result with an unpaired surrogate", () => new Response('{"status":"success","content":"half \\ud83d"}', { headers: { "content-type": "application/json" } })],
  ])("fails the task visibly and returns the credits when the agent %s", async (_, respond) => {
    const clock = frozenClock();
    fakeAgent(respond as () => Response);
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "try");
    const items = await settled(w, c.id, clock);
    expect(items[0]).toMatchObject({ role: "error", taskId: items[1]!.taskId });
    expect(items[1]).toMatchObject({ role: "owner", status: "failed" });
    expect(await creditsOf(w.account.id)).toBe(1000);
    const summary = (await call("GET", `/v1/projects/${w.projectId}/chats/${c.id}`, { token: w.token })).json;
    expect(summary.isWorking).toBe(false);
  });

  it("shows why in separate sentences when the agent refuses the task", async () => {
    const clock = frozenClock();
    fakeAgent(() => new Response("boom", { status: 500 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "try");
    const [error] = await settled(w, c.id, clock);
    expect(error!.content).toBe("The agent could not take the task: the agent answered HTTP 500. Its credits were returned.");
  });

  it("fails a task whose agent never calls back once the deadline passes, then runs the next", async () => {
    const clock = frozenClock();
    let answer = () => new Response(null, { status: 202 });
    fakeAgent(() => answer());
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "silent");
    await send(w, c.id, "next");
    await runNextAlarm(room(c.id), clock);
    const startedAt = clock.now();
    expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "working" });
    await runNextAlarm(room(c.id), clock); // the chat list hears of the start
    expect(await alarmOf(room(c.id)), "looked at again at the deadline, AGENT_TIMEOUT_SECONDS after the start").toBe(startedAt + 60_000);
    answer = () => Response.json({ status: "success", content: "done" });
    const items = await settled(w, c.id, clock);
    const owners = items.filter((m) => m.role === "owner");
    expect(owners.map((m) => m.status)).toEqual(["success", "failed"]);
    expect(items.some((m) => m.role === "error" && m.content.includes("did not send a result"))).toBe(true);
  });
});
