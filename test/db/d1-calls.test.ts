import { evictDurableObject } from "cloudflare:test";
import { describe, expect, vi } from "vitest";
import { hashSecret } from "../../src/auth/secrets";
import { maintenanceFlag } from "../../src/chats/maintenance";
import { ACCESS_FRESH_MS, forgetMemberships } from "../../src/projects/access";
import { frozenClock, settle } from "../clock";
import { watchD1 } from "../d1-calls";
import { call, chatsPath, creditsOf, env, replies, room, send, type world, historyOf } from "../helpers";
import { it } from "../fixtures/chat";

/** One message's whole life as a client sees it: accepted, dispatched and charged, replied to, listed, read. */
async function messageLife(w: Awaited<ReturnType<typeof world>>, chatId: string, clock: ReturnType<typeof frozenClock>, content: string) {
  expect((await send(w, chatId, content)).status).toBe(202);
  await settle(room(chatId), clock);
  const list = await call("GET", chatsPath(w), { token: w.token });
  expect(list.json.items[0]).toMatchObject({ id: chatId, isWorking: false });
  expect(list.json.items[0].latestAgentPreview).toContain(content);
  expect((await call("GET", `${chatsPath(w)}/${chatId}/messages`, { token: w.token })).status).toBe(200);
}

describe("D1 calls", () => {
  it("a message's whole life makes no D1 query while the read-mostly copies are fresh", async ({ clock, w, chat }) => {
    await messageLife(w, chat.id, clock, "warm up");
    // The warm-up ends with the chat list's update, 2 s after its send: the flag's copy (fresh 2 s) is read again first.
    await maintenanceFlag(env.DB);
    const d1 = watchD1();
    const startedAt = clock.now();
    await messageLife(w, chat.id, clock, "counted");
    // The send reads the maintenance flag's copy (fresh MAINTENANCE_FRESH_MS); every step, membership and project copies.
    expect(clock.now() - startedAt, "the life fits in the copies' freshness").toBeLessThan(ACCESS_FRESH_MS);
    expect(d1.calls).toEqual([]);
    expect(replies(await historyOf(w, chat.id))).toHaveLength(2);
    expect(await creditsOf(w.account.id)).toBe(998);
  });

  it("with every copy stale, it writes nothing and reads only memberships, projects and the maintenance flag", async ({ clock, w, chat }) => {
    await messageLife(w, chat.id, clock, "warm up");
    clock.advance(60_000);
    const d1 = watchD1();
    await messageLife(w, chat.id, clock, "counted");
    expect(d1.writes()).toEqual([]);
    expect(d1.tables()).toEqual(["project_members", "projects", "settings"]);
    // The membership read (which says the project's state too) and the maintenance flag, once each.
    expect(d1.calls).toHaveLength(2);
    expect(await creditsOf(w.account.id)).toBe(998);
  });

  it("an authenticated GET makes no D1 query when warm, and one read of the membership when cold", async ({ clock, w, chat }) => {
    const get = () => call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token });
    expect((await get()).status).toBe(200);
    const warm = watchD1();
    expect((await get()).status).toBe(200);
    expect(warm.calls).toEqual([]);
    vi.restoreAllMocks();

    frozenClock().set(clock.now());
    forgetMemberships();
    await evictDurableObject(env.TOKEN_GATE.getByName(await hashSecret(w.token)));
    const cold = watchD1();
    expect((await get()).status).toBe(200);
    expect(cold.writes()).toEqual([]);
    expect(cold.tables()).toEqual(["project_members", "projects"]);
    expect(cold.calls).toHaveLength(1);
  });
});
