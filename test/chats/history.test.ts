import { describe, expect } from "vitest";
import { runNextAlarm, settle } from "../clock";
import { call, chatsPath, expectProblem, historyOf, newChat, replies, room, send } from "../helpers";
import { it } from "../fixtures/chat";

describe("the message history", () => {
  it("pages newest first with a cursor, stable while new messages arrive", async ({ clock, w, chat }) => {
    for (let i = 0; i < 4; i++) await send(w, chat.id, `m${i}`);
    await settle(room(chat.id), clock);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(4);
    const seen: string[] = [];
    let page = await historyOf(w, chat.id, "?limit=3");
    seen.push(...page.items.map((m) => m.id));
    // Between two pages a message arrives and its task starts: two messages newer than the cursor.
    await send(w, chat.id, "arrives while paging");
    await runNextAlarm(room(chat.id), clock);
    expect((await historyOf(w, chat.id, "?limit=1")).items[0]).toMatchObject({ role: "owner", status: "working" });
    while (page.nextCursor) {
      page = await historyOf(w, chat.id, `?limit=3&cursor=${encodeURIComponent(page.nextCursor)}`);
      seen.push(...page.items.map((m) => m.id));
    }
    expect(seen).toHaveLength(8);
    expect(new Set(seen).size).toBe(8);
    await settle(room(chat.id), clock);
    const all = await historyOf(w, chat.id);
    expect(replies(all)).toHaveLength(5);
    expect(all.items.slice(2).map((m) => m.id)).toEqual(seen);
  });

  it("defaults to 50 per page and bounds limit to 1..100", async ({ w, chat }) => {
    const base = `${chatsPath(w)}/${chat.id}/messages`;
    expect((await call("GET", base, { token: w.token })).json).toEqual({ items: [], nextCursor: null });
    for (const q of ["?limit=0", "?limit=101", "?limit=abc", "?limit=1.5", "?cursor=", "?other=1"]) {
      expectProblem(await call("GET", `${base}${q}`, { token: w.token }), 400, "invalid_request");
    }
  });

  it("rejects malformed cursors and cursors of another chat with 400", async ({ clock, w }) => {
    const a = await newChat(w);
    const b = await newChat(w);
    for (let i = 0; i < 2; i++) await send(w, a.id, `m${i}`);
    await settle(room(a.id), clock);
    expect(replies(await historyOf(w, a.id))).toHaveLength(2);
    const { nextCursor } = await historyOf(w, a.id, "?limit=1");
    expect(nextCursor).toBeTruthy();
    for (const cursor of ["garbage!", "bm9wZQ", btoa(`${a.id}:0`), nextCursor!.slice(0, -2)]) {
      expectProblem(await call("GET", `${chatsPath(w)}/${a.id}/messages?cursor=${encodeURIComponent(cursor)}`, { token: w.token }), 400, "invalid_request");
    }
    expectProblem(await call("GET", `${chatsPath(w)}/${b.id}/messages?cursor=${nextCursor}`, { token: w.token }), 400, "invalid_request");
  });
});
