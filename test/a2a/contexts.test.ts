import { describe, expect } from "vitest";
import { settle } from "../clock";
import { call, room, world } from "../helpers";
import { it } from "../fixtures/chat";
import { errorOf, openStream, resultOf, rpc, userMessage } from "./a2a-helpers";

const immediately = { returnImmediately: true };
const sendIn = (token: string, projectId: string, contextId: string, text: string, extra: Record<string, unknown> = {}) =>
  rpc(token, projectId, "SendMessage", { message: userMessage(text, { contextId, ...extra }), configuration: immediately });
const chatList = async (token: string, projectId: string) => (await call("GET", `/v1/projects/${projectId}/chats`, { token })).json.items as { id: string; title: string }[];

describe("A2A contexts a client makes", () => {
  it("the first send to a new context makes a chat for it; later sends go there; every Task shows the context as sent and names the chat", async ({ clock, w }) => {
    const first = (await resultOf(sendIn(w.token, w.projectId, "default", "Plan the launch\nin detail"))).task;
    expect(first.contextId).toBe("default");
    const chatId = first.metadata.chatId as string;
    expect(chatId).toMatch(/^[0-9a-f-]{36}$/);
    await settle(room(chatId), clock);
    const second = (await resultOf(sendIn(w.token, w.projectId, "default", "and the budget"))).task;
    expect(second.metadata.chatId).toBe(chatId);
    await settle(room(chatId), clock);
    // The chat is /v1's like any other, titled by the first message.
    const chat = await call("GET", `/v1/projects/${w.projectId}/chats/${chatId}`, { token: w.token });
    expect(chat.json.title).toBe("Plan the launch");
    const read = await resultOf(rpc(w.token, w.projectId, "GetTask", { id: first.id }));
    expect(read).toMatchObject({ contextId: "default", metadata: { chatId }, status: { state: "TASK_STATE_COMPLETED" } });
    expect(read.history[0].contextId).toBe("default");
    // ListTasks takes the context as it takes a chat id.
    const listed = await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: "default" }));
    expect(listed.tasks.map((t: { id: string }) => t.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed.tasks.every((t: { contextId: string }) => t.contextId === "default")).toBe(true);
    // The chat's own id names it too, and its tasks still show the context the client made.
    const byChatId = (await resultOf(sendIn(w.token, w.projectId, chatId.toUpperCase(), "by the chat's id"))).task;
    expect(byChatId).toMatchObject({ contextId: "default", metadata: { chatId } });
  });

  it("a stream's Task, status and artifact updates carry the context as sent", async ({ clock, w }) => {
    const stream = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("stream it", { contextId: "ctx/Stream-1" }) });
    expect(stream.response.status).toBe(200);
    const chats = await chatList(w.token, w.projectId);
    await settle(room(chats[0]!.id), clock);
    const frames = await stream.frames();
    const contexts = frames.map((f) => {
      const result = f.data.result;
      return (result.task ?? result.statusUpdate ?? result.artifactUpdate).contextId;
    });
    expect(frames.length).toBeGreaterThan(2);
    expect(new Set(contexts)).toEqual(new Set(["ctx/Stream-1"]));
  });

  it("two first sends to one context at once make one chat", async ({ clock, w }) => {
    const [a, b] = await Promise.all([sendIn(w.token, w.projectId, "race", "one"), sendIn(w.token, w.projectId, "race", "two")].map(resultOf));
    expect(a.task.metadata.chatId).toBe(b.task.metadata.chatId);
    expect(a.task.id).not.toBe(b.task.id);
    await settle(room(a.task.metadata.chatId), clock);
    expect((await chatList(w.token, w.projectId)).map((c) => c.id)).toEqual([a.task.metadata.chatId]);
  });

  it("contexts match exactly; a UUID that is another project's chat starts a chat here and leaves that one alone", async ({ w }) => {
    const lower = (await resultOf(sendIn(w.token, w.projectId, "team", "x"))).task;
    const upper = (await resultOf(sendIn(w.token, w.projectId, "Team", "y"))).task;
    expect(upper.metadata.chatId).not.toBe(lower.metadata.chatId);
    const other = await world();
    const foreign = await call("POST", `/v1/projects/${other.projectId}/chats`, { token: other.token, body: { title: "theirs" } });
    const here = (await resultOf(sendIn(w.token, w.projectId, foreign.json.id, "z"))).task;
    expect(here.contextId).toBe(foreign.json.id);
    expect(here.metadata.chatId).not.toBe(foreign.json.id);
    const theirs = await call("GET", `/v1/projects/${other.projectId}/chats/${foreign.json.id}/messages`, { token: other.token });
    expect(theirs.json.items).toEqual([]);
  });

  it("a context that is not 1 to 256 visible ASCII characters is -32602 and makes nothing", async ({ w }) => {
    for (const contextId of ["has space", "x".repeat(257), "café", "tab\there"]) {
      const error = await errorOf(sendIn(w.token, w.projectId, contextId, "hello"));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain("contextId");
    }
    expect(await chatList(w.token, w.projectId)).toEqual([]);
    expect((await resultOf(sendIn(w.token, w.projectId, "x".repeat(256), "the longest"))).task.contextId).toBe("x".repeat(256));
  });

  it("with a taskId the task decides the chat: its context agrees, another context is -32602; ListTasks of an unknown context is empty", async ({ clock, w }) => {
    const asked = (await resultOf(sendIn(w.token, w.projectId, "support", "/ask Your name?"))).task;
    await settle(room(asked.metadata.chatId), clock);
    expect((await resultOf(rpc(w.token, w.projectId, "GetTask", { id: asked.id }))).status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const elsewhere = await errorOf(sendIn(w.token, w.projectId, "other", "Ada", { taskId: asked.id }));
    expect(elsewhere.code).toBe(-32602);
    const answered = (await resultOf(sendIn(w.token, w.projectId, "support", "Ada", { taskId: asked.id }))).task;
    expect(answered).toMatchObject({ id: asked.id, contextId: "support" });
    // Naming a task makes no context: "other" is still unknown.
    expect((await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: "other" }))).tasks).toEqual([]);
  });
});
