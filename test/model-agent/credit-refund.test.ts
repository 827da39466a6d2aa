import { describe, expect, it, vi } from "vitest";
import { frozenClock, runNextAlarm } from "../clock";
import { call, chatsPath, creditsOf, inDays, newChat, peek, room, world } from "../helpers";
import { fakeModel, replying } from "./fake-model";

describe("a failed task's credits and the sending token's limit", () => {
  it("go back to both: the owner's balance and the token's creditsUsed", async () => {
    const clock = frozenClock();
    fakeModel(replying({ parts: [] }));
    const w = await world({ credits: 5 });
    const made = await call("POST", "/auth/api-tokens", {
      token: w.session,
      body: { name: "limited", scopes: ["chat:read", "chat:write"], expiresAt: inDays(30), creditLimit: 1 },
    });
    expect(made.status, made.text).toBe(201);
    const c = await newChat(w);
    const sent = await call("POST", `${chatsPath(w)}/${c.id}/messages`, {
      token: made.json.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { content: "hello" },
    });
    expect(sent.status).toBe(202);
    await runNextAlarm(room(c.id), clock);
    await vi.waitFor(async () => expect((await peek(w, c.id))[0]).toMatchObject({ role: "error", content: "The model sent no reply. Its credits were returned." }));
    await vi.waitFor(async () => {
      const [token] = (await call("GET", "/auth/api-tokens", { token: w.session })).json.items.filter((t: { id: string }) => t.id === made.json.item.id);
      expect(token).toMatchObject({ creditLimit: 1, creditsUsed: 0 });
      expect(await creditsOf(w.account.id)).toBe(5);
    });
    // Its room under the limit is back: the next send is accepted and runs.
    const again = await call("POST", `${chatsPath(w)}/${c.id}/messages`, {
      token: made.json.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { content: "again" },
    });
    expect(again.status, again.text).toBe(202);
  });
});
