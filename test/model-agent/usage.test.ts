import { describe, expect, it, vi } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, historyOf, newChat, peek, room, send, world } from "../helpers";
import { steer, stop } from "../chats/control-helpers";
import { DEFAULT_USAGE, fakeModel, replying } from "./fake-model";

const IN = DEFAULT_USAGE.prompt_tokens;
const OUT = DEFAULT_USAGE.completion_tokens;

async function ended(w: Awaited<ReturnType<typeof world>>, chatId: string) {
  return vi.waitFor(async () => {
    const reply = (await peek(w, chatId)).find((m) => m.role === "owner")!;
    expect(reply.status).not.toBe("working");
    return reply;
  });
}

describe("a model task's usage", () => {
  it("asks the model for its token counts and shows them on the reply and in the project's usage", async () => {
    const clock = frozenClock();
    const model = fakeModel(replying({ parts: ["Hello."] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "count my tokens");
    await runNextAlarm(room(c.id), clock);
    expect((await model.made(1)).body.stream_options).toEqual({ include_usage: true });
    expect((await ended(w, c.id)).usage).toEqual({ credits: 1, inputTokens: IN, outputTokens: OUT });
    await settle(room(c.id), clock);
    const usage = (await call("GET", `/v1/projects/${w.projectId}/usage`, { token: w.token })).json.items;
    expect(usage).toEqual([{ date: new Date(clock.now()).toISOString().slice(0, 10), tasks: 1, credits: 1, inputTokens: IN, outputTokens: OUT }]);
  });

  it("sums the calls of a steered task, one charge", async () => {
    const clock = frozenClock();
    const model = fakeModel((_, index) =>
      index === 0 ? { parts: ["Drafting ", "a plan."], gapMs: 400 } : { parts: ["Blue it is."], usage: { prompt_tokens: 400, completion_tokens: 5 } },
    );
    const w = await world({ credits: 3 });
    const c = await newChat(w);
    await send(w, c.id, "make a plan");
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]!.content.length).toBeGreaterThan(0));
    expect((await steer(w, c.id, "make it blue")).status).toBe(202);
    await model.made(2);
    expect((await ended(w, c.id)).usage).toEqual({ credits: 1, inputTokens: IN + 400, outputTokens: OUT + 5 });
  });

  it("counts only the calls that reported: a retried 429 reports none", async () => {
    const clock = frozenClock();
    const busy = Response.json({ error: { message: "busy" } }, { status: 429, headers: { "retry-after-ms": "5" } });
    const model = fakeModel((_, index) => (index === 0 ? busy : { parts: ["made it"] }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    expect((await ended(w, c.id)).usage).toEqual({ credits: 1, inputTokens: IN, outputTokens: OUT });
    expect(model.calls).toHaveLength(2);
  });

  it("keeps a stopped task's charge; a call cut short by the stop reports nothing", async () => {
    const clock = frozenClock();
    fakeModel(replying({ parts: Array.from({ length: 40 }, (_, i) => `part${i} `), gapMs: 100 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "long");
    await runNextAlarm(room(c.id), clock);
    const reply = await vi.waitFor(async () => {
      const r = (await peek(w, c.id))[0]!;
      expect(r.content.length).toBeGreaterThan(0);
      return r;
    });
    const r = await stop(w, c.id, reply.id);
    expect(r.json.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
    expect((await historyOf(w, c.id)).items.find((m) => m.id === reply.id)!.usage).toEqual({ credits: 1, inputTokens: null, outputTokens: null });
  });

  it("shows a failed task's usage with no credits", async () => {
    const clock = frozenClock();
    fakeModel(() => Response.json({ error: { message: "no" } }, { status: 401 }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await runNextAlarm(room(c.id), clock);
    expect((await ended(w, c.id)).usage).toEqual({ credits: 0, inputTokens: null, outputTokens: null });
  });
});
