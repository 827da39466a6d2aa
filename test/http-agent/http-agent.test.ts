import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, creditsOf, env, eventually, expectProblem, newChat, peek, send, world, type World } from "../helpers";

type AgentCall = { url: string; authorization: string | null; body: any };
const realFetch = globalThis.fetch;

/** Replaces the outbound agent with a fake that answers with respond(); other fetches pass through. */
function fakeAgent(respond: (call: AgentCall) => Response | Promise<Response>) {
  const calls: AgentCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://agent.test/")) return realFetch(input as RequestInfo, init);
    const agentCall = { url: request.url, authorization: request.headers.get("authorization"), body: await request.json() };
    calls.push(agentCall);
    return respond(agentCall);
  });
  return calls;
}

afterEach(() => vi.restoreAllMocks());

const settled = (w: World, chatId: string) =>
  eventually("the task to end", async () => {
    const items = await peek(w, chatId);
    return items.some((m) => m.role === "owner" && m.status !== "working") && items;
  });
const callback = (chatId: string, taskId: string, body: unknown, secret = "agent-test-secret") =>
  call("POST", `/agent/chats/${chatId}/tasks/${taskId}/result`, { token: secret, body });

describe("http agent adapter", () => {
  it("posts the task with the secret and stores a result given at once", async () => {
    const calls = fakeAgent(() => Response.json({ status: "success", content: "Blue it is." }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "Make it blue");
    const items = await settled(w, c.id);
    expect(items[0]).toMatchObject({ role: "owner", status: "success", content: "Blue it is." });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.authorization).toBe("Bearer agent-test-secret");
    expect(calls[0]!.body).toMatchObject({ chatId: c.id, projectId: w.projectId, content: "Make it blue", taskId: items[0]!.taskId });
    expect(calls[0]!.body.callbackUrl).toBe(`https://api.example.test/agent/chats/${c.id}/tasks/${items[0]!.taskId}/result`);
  });

  it("takes the callback address from PUBLIC_URL, never from a forged Host", async () => {
    const calls = fakeAgent(() => Response.json({ status: "success", content: "ok" }));
    const w = await world();
    const c = await newChat(w);
    const forged = new Request(`https://attacker.example/v1/projects/${w.projectId}/chats/${c.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${w.token}`, "idempotency-key": crypto.randomUUID(), "content-type": "application/json", host: "attacker.example" },
      body: JSON.stringify({ content: "Send my result elsewhere" }),
    });
    expect((await exports.default.fetch(forged)).status).toBe(202);
    const items = await settled(w, c.id);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body.callbackUrl).toBe(`https://api.example.test/agent/chats/${c.id}/tasks/${items[0]!.taskId}/result`);
  });

  it("waits for the agent's callback, also across an eviction, and accepts it once", async () => {
    fakeAgent(() => new Response(null, { status: 202 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "Take your time");
    const working = await eventually("the task to start", async () => (await peek(w, c.id)).find((m) => m.role === "owner" && m.status === "working"));
    await evictDurableObject(env.CHAT_ROOM.getByName(c.id));
    expectProblem(await callback(c.id, working.taskId!, { status: "success", content: "x" }, "wrong-secret"), 401);
    expectProblem(await callback(c.id, crypto.randomUUID(), { status: "success", content: "x" }), 404);
    expectProblem(await callback(c.id, working.taskId!, { status: "great" }), 400);
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
  ])("fails the task visibly and returns the credits when the agent %s", async (_, respond) => {
    fakeAgent(respond as () => Response);
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "try");
    const items = await settled(w, c.id);
    expect(items[0]).toMatchObject({ role: "error", taskId: items[1]!.taskId });
    expect(items[1]).toMatchObject({ role: "owner", status: "failed" });
    expect(await eventually("the refund", async () => (await creditsOf(w.account.id)) === 1000)).toBe(true);
    const summary = (await call("GET", `/v1/projects/${w.projectId}/chats/${c.id}`, { token: w.token })).json;
    expect(summary.isWorking).toBe(false);
  });

  it("fails a task whose agent never calls back once the deadline passes, then runs the next", async () => {
    let answer = () => new Response(null, { status: 202 });
    fakeAgent(() => answer());
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "silent");
    await send(w, c.id, "next");
    await eventually("the first task to start", async () => (await peek(w, c.id)).some((m) => m.status === "working"));
    answer = () => Response.json({ status: "success", content: "done" });
    const later = Date.now() + 61_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    await runDurableObjectAlarm(env.CHAT_ROOM.getByName(c.id));
    const items = await settled(w, c.id);
    const owners = items.filter((m) => m.role === "owner");
    expect(owners.map((m) => m.status)).toEqual(["success", "failed"]);
    expect(items.some((m) => m.role === "error" && m.content.includes("did not send a result"))).toBe(true);
  });
});
