import { describe, expect, it } from "vitest";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { chatOf, creditsOf, historyOf, newChat, queueOf, room, send, world } from "../helpers";

describe("paying for tasks", () => {
  it("fails the task visibly when the owner has no credits, and takes nothing", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 0 });
    const c = await newChat(w);
    const r = await send(w, c.id, "please");
    expect(r.status).toBe(202);
    await runNextAlarm(room(c.id), clock);
    const q = await queueOf(w, c.id);
    expect(q.items).toHaveLength(1);
    expect(q.items[0]).toMatchObject({ id: r.json.submissionId, content: "please", status: "failed" });
    const page = await historyOf(w, c.id);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ role: "error", taskId: expect.any(String) });
    expect(await creditsOf(w.account.id)).toBe(0);
    expect((await chatOf(w, c.id)).isWorking).toBe(false);
  });

  it("never lets the balance go negative across chats", async () => {
    const clock = frozenClock();
    const w = await world({ credits: 2 });
    const chats = await Promise.all([newChat(w), newChat(w), newChat(w), newChat(w)]);
    await Promise.all(chats.map((c) => send(w, c.id, "go")));
    // The four objects charge the same balance at once.
    await Promise.all(chats.map((c) => runNextAlarm(room(c.id), clock)));
    for (const c of chats) await settle(room(c.id), clock);
    const outcomes = await Promise.all(chats.map(async (c) => (await historyOf(w, c.id)).items.map((m) => `${m.role}:${m.status}`)));
    expect(outcomes.filter((o) => o.join() === "owner:success,user:null")).toHaveLength(2);
    expect(outcomes.filter((o) => o.join() === "error:null")).toHaveLength(2);
    expect(await creditsOf(w.account.id)).toBe(0);
  });
});
