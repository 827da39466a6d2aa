import { describe, expect, it, vi } from "vitest";
import { frozenClock, runNextAlarm } from "../clock";
import { call, chatOf, chatsPath, newChat, peek, room, send, world } from "../helpers";
import { openEvents } from "../sse";
import { fakeModel } from "./fake-model";

const text = (m: { content: unknown }) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
const conversationOf = (body: any) => body.messages.filter((m: { role: string }) => m.role !== "system").map((m: any) => [m.role, text(m)]);

describe("a model's questions", () => {
  it("asks a choice with ask_user's options after what it wrote; the picked labels reach the model as the user's words", async () => {
    const clock = frozenClock();
    const ask = { question: "Which theme?", options: [{ label: "Light", description: "white page" }, { label: "Dark" }, { label: "High contrast" }], multiSelect: true };
    const model = fakeModel((_, index) => (index === 0 ? { parts: ["Let me set it up."], ask } : { parts: ["Done."] }));
    const w = await world();
    const c = await newChat(w);
    const s = await openEvents(`${chatsPath(w)}/${c.id}/events`, w.token);
    await s.next();
    await send(w, c.id, "make a site");
    await runNextAlarm(room(c.id), clock);
    const tool = (await model.made(1)).body.tools.find((t: { function: { name: string } }) => t.function.name === "ask_user");
    expect(Object.keys(tool.function.parameters.properties)).toEqual(["question", "options", "multiSelect", "allowText"]);

    const asked = await s.until((e) => e.type === "question");
    const q = asked.data;
    expect(q).toMatchObject({ kind: "choice", prompt: "Which theme?", multiSelect: true, allowText: false, status: "pending" });
    expect(q.options).toEqual([
      { id: "1", label: "Light", description: "white page" },
      { id: "2", label: "Dark", description: null },
      { id: "3", label: "High contrast", description: null },
    ]);
    // What it wrote, a blank line, then the prompt, which arrives as the reply's last delta.
    const reply = (await peek(w, c.id)).find((m) => m.role === "owner")!;
    expect(reply).toMatchObject({ status: "success", content: "Let me set it up.\n\nWhich theme?", questionId: q.id });
    const deltas = s.events.filter((e) => e.type === "message.delta" && e.data.id === reply.id);
    expect(deltas.at(-1)!.data.text).toBe("\n\nWhich theme?");
    expect(await chatOf(w, c.id)).toMatchObject({ isAwaitingUser: true, pendingQuestionId: q.id });

    const r = await call("POST", `${chatsPath(w)}/${c.id}/questions/${q.id}/answer`, {
      token: w.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { optionIds: ["3", "2"] },
    });
    expect(r.status, r.text).toBe(202);
    await runNextAlarm(room(c.id), clock);
    const next = await model.made(2);
    expect(conversationOf(next.body).slice(-2)).toEqual([
      ["assistant", "Let me set it up.\n\nWhich theme?"],
      ["user", "Dark, High contrast"],
    ]);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ role: "owner", status: "success", content: "Done.", questionId: null }));
    await s.close();
  });
});
