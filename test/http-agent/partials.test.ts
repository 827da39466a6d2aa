import { describe, expect, it } from "vitest";
import { ChatList } from "../../src/chats/schemas";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatOf, chatsPath, expectProblem, newChat, peek, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { acceptingAgent, runningTask } from "./fake-agent";

const taskPath = (chatId: string, taskId: string, what: "partial" | "result") => `/agent/chats/${chatId}/tasks/${taskId}/${what}`;
const partial = (chatId: string, taskId: string, body: unknown, secret = "agent-test-secret") => call("POST", taskPath(chatId, taskId, "partial"), { token: secret, body });
const result = (chatId: string, taskId: string, body: unknown) => call("POST", taskPath(chatId, taskId, "result"), { token: "agent-test-secret", body });

describe("partial output from an http agent", () => {
  it("appends numbered parts once and in order; the history shows the reply growing while it works", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();

    expect((await partial(c.id, reply.taskId!, { seq: 1, text: "Hello, " })).status).toBe(204);
    expect((await partial(c.id, reply.taskId!, { seq: 1, text: "Hello, " })).status, "a retried part").toBe(204);
    expectProblem(await partial(c.id, reply.taskId!, { seq: 3, text: "!" }), 409, "conflict");
    expect((await partial(c.id, reply.taskId!, { seq: 2, text: "world" })).status).toBe(204);
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)).toMatchObject({ status: "working", content: "Hello, world" });
    expect((await chatOf(w, c.id)).latestAgentPreview).toBe("Hello, world");

    expect((await result(c.id, reply.taskId!, { status: "success", content: "Hello, world!" })).status).toBe(204);
    const final = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    const deltas = s.events.filter((e) => e.type === "message.delta").map((e) => e.data.text);
    expect(deltas).toEqual(["Hello, ", "world", "!"]);
    expect(final.data.content).toBe("Hello, world!");

    expect((await partial(c.id, reply.taskId!, { seq: 3, text: " late" })).status, "a late part is ignored").toBe(204);
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)!.content).toBe("Hello, world!");
    await s.close();
  });

  it("keeps what the parts wrote when the agent sends no result in time", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world({ credits: 2 });
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    expect((await partial(c.id, reply.taskId!, { seq: 1, text: "Half of " })).status).toBe(204);
    expect((await partial(c.id, reply.taskId!, { seq: 2, text: "a reply" })).status).toBe(204);
    // The test project's AGENT_TIMEOUT_SECONDS is 60.
    clock.advance(61_000);
    await settle(room(c.id), clock);
    const [error, ended] = await peek(w, c.id);
    expect(ended).toMatchObject({ id: reply.id, status: "failed", content: "Half of a reply", usage: { credits: 0, inputTokens: null, outputTokens: null } });
    expect(error!.content).toBe("The agent did not send a result within 60 s. Its credits were returned.");
    const final = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "failed");
    expect(final.data.content).toBe("Half of a reply");
    await s.close();
  });

  it("takes the result as authoritative when it does not extend what was streamed", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    await partial(c.id, reply.taskId!, { seq: 1, text: "draft that will be replaced" });
    await result(c.id, reply.taskId!, { status: "success", content: "The real answer." });
    const final = await s.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    expect(final.data.content).toBe("The real answer.");
    expect(s.events.filter((e) => e.type === "message.delta").map((e) => e.data.text)).toEqual(["draft that will be replaced"]);
    await s.close();
  });

  it("refuses a wrong secret, an unknown task, a malformed part and a reply over 100000 characters", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    expectProblem(await partial(c.id, reply.taskId!, { seq: 1, text: "x" }, "wrong-secret"), 401, "unauthorized");
    expectProblem(await partial(c.id, crypto.randomUUID(), { seq: 1, text: "x" }), 404, "not_found");
    for (const body of [{ seq: 0, text: "x" }, { seq: 1, text: "" }, { seq: 1.5, text: "x" }, { text: "x" }, { seq: 1, text: 5 }]) {
      expectProblem(await partial(c.id, reply.taskId!, body), 400, "invalid_request");
    }
    expect((await partial(c.id, reply.taskId!, { seq: 1, text: "y".repeat(100_000) })).status).toBe(204);
    expectProblem(await partial(c.id, reply.taskId!, { seq: 2, text: "y" }), 400, "invalid_request");
  });
});

describe("an agent that waits for the user", () => {
  it("marks the chat awaiting the user until the next message is accepted, in chat events and the list", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    await result(c.id, reply.taskId!, { status: "success", content: "Which colour?", awaitingUser: true });
    await s.until((e) => e.type === "chat" && e.data.isAwaitingUser === true && e.data.isWorking === false);
    expect((await chatOf(w, c.id)).isAwaitingUser).toBe(true);
    // The result asks for the alarm, which copies the chat to the list index.
    expect(await runNextAlarm(room(c.id), clock)).toBe(true);
    const listed = ChatList.parse((await call("GET", chatsPath(w), { token: w.token })).json).items;
    expect(listed.find((x) => x.id === c.id)).toMatchObject({ isAwaitingUser: true, isWorking: false });

    expect((await send(w, c.id, "Blue")).status).toBe(202);
    await s.until((e) => e.type === "chat" && e.data.isAwaitingUser === false);
    expect((await chatOf(w, c.id)).isAwaitingUser).toBe(false);
    await s.close();
  });

  it("is not awaiting the user after a failed task, whatever the agent says", async () => {
    const clock = frozenClock();
    acceptingAgent();
    const w = await world();
    const c = await newChat(w);
    const reply = await runningTask(w, c.id, clock);
    await result(c.id, reply.taskId!, { status: "failed", content: "", awaitingUser: true });
    expect((await chatOf(w, c.id)).isAwaitingUser).toBe(false);
  });
});
