import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { SENT_BY_TEST, chatsPath, creditsOf, env, historyOf, newChat, peek, room, send, world, type World } from "../helpers";
import { openEvents } from "../sse";
import { steer, stop, stopped } from "../chats/control-helpers";
import { fakeModel, replying } from "./fake-model";

const slow = { parts: Array.from({ length: 40 }, (_, i) => `part${i} `), gapMs: 100 };
const userTexts = (body: any) => body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);

/** Waits until the chat's reply has some text from the model. */
async function writing(w: Awaited<ReturnType<typeof world>>, chatId: string) {
  return vi.waitFor(async () => {
    const reply = (await peek(w, chatId))[0]!;
    expect(reply).toMatchObject({ role: "owner", status: "working" });
    expect(reply.content.length).toBeGreaterThan(0);
    return reply;
  });
}

/** A chat of w's project on the held model (test/doubles/held-model-chat-room.ts), driven over RPC as the routes drive theirs. */
async function heldChat(w: World) {
  const chatId = crypto.randomUUID();
  const stub = env.HELD_MODEL_CHAT_ROOM.getByName(chatId);
  await stub.create(chatId, w.projectId, "held");
  const seen = () => ({ maintenance: { value: false, at: Date.now() }, project: { value: { status: "active" as const, ownerAccountId: w.account.id }, at: Date.now() } });
  return {
    stub,
    send: async (content: string) =>
      expect(await stub.submit(w.projectId, { kind: "send", idempotencyKey: crypto.randomUUID(), content, replyToMessageId: null, ...SENT_BY_TEST, seen: seen() })).toMatchObject({
        kind: "accepted",
      }),
    history: async () => {
      const page = await stub.messages(w.projectId, undefined, 100);
      if (page.kind !== "page") throw new Error(page.kind);
      return page.items;
    },
  };
}

/** The chat as an object answers it over RPC. */
async function roomChatIn(stub: DurableObjectStub<ChatRoom>, projectId: string) {
  const read = await stub.get(projectId);
  if (read.kind !== "chat") throw new Error(read.kind);
  return read.chat;
}

describe("controlling a model's task", () => {
  it("a stop aborts the model's request, and nothing is appended after it", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying(slow));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "tell me a long story");
    await runNextAlarm(room(c.id), clock);
    const reply = await writing(w, c.id);
    const r = await stop(w, c.id, reply.id);
    expect(r.status).toBe(200);
    const ended = stopped(r);
    expect(ended.status).toBe("interrupted_by_user");
    const call = await model.made(1);
    await vi.waitFor(() => expect(call.aborted).toBe(true));
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)!.content).toBe(ended.content);
    expect(call.finished).toBe(false);
  });

  it("refuses whatever a model's task writes after its stop, and changes nothing", async () => {
    const clock = frozenClock();
    const w = await world();
    const held = await heldChat(w);
    await held.send("tell me a long story");
    await runNextAlarm(held.stub, clock);
    expect(await held.stub.write("Once upon")).toBe(true);
    const reply = (await held.history())[0]!;
    const stopped = await held.stub.stopReply(w.projectId, reply.id);
    expect(stopped).toMatchObject({ kind: "message", message: { status: "interrupted_by_user", content: "Once upon" } });
    // A batch the model had gathered before the stop, written after it: refused, and nothing of it lands.
    expect(await held.stub.write(" a time")).toBe(false);
    await held.stub.finishWith({ status: "success", content: "Once upon a time, the end." });
    expect((await held.history())[0]).toMatchObject({ id: reply.id, status: "interrupted_by_user", content: "Once upon" });
  });

  it("gives steering texts to the model as user messages after what it wrote, and the reply goes on with its answer", async () => {
    const clock = frozenClock();
    const model = fakeModel((_, index) => (index === 0 ? { parts: ["Drafting ", "a plan."], gapMs: 400 } : { parts: ["Blue it is."] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "make a plan");
    await runNextAlarm(room(c.id), clock);
    await writing(w, c.id);
    expect((await steer(w, c.id, "make it blue")).status).toBe(202);
    const second = await model.made(2);
    expect(second.body.messages.slice(-3).map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "make a plan"],
      ["assistant", "Drafting a plan."],
      ["user", "make it blue"],
    ]);
    await vi.waitFor(async () => expect((await peek(w, c.id)).find((m) => m.role === "owner")).toMatchObject({ status: "success", content: "Drafting a plan.\n\nBlue it is." }));
    // The steering text is a user message of the task, in the history where it was taken.
    const history = (await historyOf(w, c.id)).items.map((m) => [m.role, m.content]);
    expect(history).toContainEqual(["user", "make it blue"]);
    expect(model.calls).toHaveLength(2);
    // The next task's model sees it before the reply that answered it.
    await send(w, c.id, "next");
    await runNextAlarm(room(c.id), clock);
    const next = await model.made(3);
    expect(next.body.messages.slice(1).map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "make a plan"],
      ["user", "make it blue"],
      ["assistant", "Drafting a plan.\n\nBlue it is."],
      ["user", "next"],
    ]);
  });

  it("a steering text sent after the model's last call has started waits for it; one sent once the task ended runs as a message", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: ["ok"] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "quick one");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]!.status).toBe("success"));
    expect((await steer(w, c.id, "and another thing")).status).toBe(202);
    await runNextAlarm(room(c.id), clock);
    const next = await model.made(2);
    expect(userTexts(next.body).at(-1)).toBe("and another thing");
  });
});

describe("a model task that fails", () => {
  it("says so in the service's own words, never the provider's (which can echo the key), and returns its credits", async () => {
    const clock = frozenClock();
    fakeModel(() => Response.json({ error: { message: "invalid key sk-test-model-key" } }, { status: 401 }));
    const w = await world({ credits: 5 });
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id)).some((m) => m.role === "error")).toBe(true));
    await settle(room(c.id), clock);
    const [error, reply] = await peek(w, c.id);
    expect(reply).toMatchObject({ role: "owner", status: "failed" });
    expect(error!.content).toBe("The model provider refused the service's credentials. Its credits were returned.");
    expect(await creditsOf(w.account.id)).toBe(5);
  });

  it("retries a provider's 429 and 5xx, honouring Retry-After, and succeeds when the provider recovers", async () => {
    const clock = frozenClock();
    const busy = (status: number) => Response.json({ error: { message: "busy" } }, { status, headers: { "retry-after-ms": "5" } });
    const model = fakeModel((_, index) => (index === 0 ? busy(429) : index === 1 ? busy(503) : { parts: ["made it"] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ status: "success", content: "made it" }));
    expect(model.calls).toHaveLength(3);
  });

  it("fails after a few retries of a provider that keeps failing", async () => {
    const clock = frozenClock();
    const model = fakeModel(() => Response.json({ error: { message: "down" } }, { status: 500, headers: { "retry-after-ms": "5" } }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ role: "error", content: "The model provider failed to answer. Its credits were returned." }));
    expect(model.calls).toHaveLength(3);
  });

  it("fails a reply the model left empty", async () => {
    const clock = frozenClock();
    fakeModel(replying({ parts: [] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ role: "error", content: "The model sent no reply. Its credits were returned." }));
  });

  it("fails a task still writing at AGENT_TIMEOUT_SECONDS and aborts its request", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: Array.from({ length: 1_000 }, () => "."), gapMs: 50 }));
    const w = await world({ credits: 3 });
    const c = await newChat(w);
    await send(w, c.id, "never stop");
    await runNextAlarm(room(c.id), clock);
    await writing(w, c.id);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    // The chat list hears of the start; then, AGENT_TIMEOUT_SECONDS after it (60 in the test project), the task's check is due.
    expect(await runNextAlarm(room(c.id), clock)).toBe(true);
    expect(await runNextAlarm(room(c.id), clock)).toBe(true);
    const [error, reply] = await peek(w, c.id);
    expect(reply).toMatchObject({ role: "owner", status: "failed" });
    expect(error!.content).toBe("The agent did not finish within 60 s. Its credits were returned.");
    // What the model had written stays, in the history and in the reply's last event.
    expect(reply!.content).toMatch(/^\.+$/);
    const end = await s.until((e) => e.type === "message" && e.data.id === reply!.id && e.data.status === "failed");
    expect(end.data.content).toBe(reply!.content);
    await s.close();
    await vi.waitFor(() => expect(model.calls[0]!.aborted).toBe(true));
    await settle(room(c.id), clock);
    expect(await creditsOf(w.account.id)).toBe(3);
  });

  it("fails at once a task whose object restarted while the model wrote (its call was lost with the object's memory)", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 3 });
    const held = await heldChat(w);
    await held.send("long one");
    await runNextAlarm(held.stub, clock);
    expect((await held.history())[0]).toMatchObject({ role: "owner", status: "working" });
    expect(await creditsOf(w.account.id)).toBe(2);
    // What the model wrote before the restart.
    expect(await held.stub.write("Half a reply")).toBe(true);
    await evictDurableObject(held.stub);
    // The object's next start finds the task and sets its alarm for now.
    expect(await roomChatIn(held.stub, w.projectId)).toMatchObject({ isWorking: true });
    expect(await alarmOf(held.stub)).toBe(clock.now());
    expect(await runNextAlarm(held.stub, clock)).toBe(true);
    const [error, reply] = await held.history();
    expect(reply).toMatchObject({ role: "owner", status: "failed" });
    expect(error!.content).toBe("The model's reply was cut off when the service restarted. Its credits were returned.");
    expect(reply!.content).toBe("Half a reply");
    await settle(held.stub, clock);
    expect(await creditsOf(w.account.id)).toBe(3);
  });
});
