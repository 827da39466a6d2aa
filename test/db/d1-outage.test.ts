import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountLedger } from "../../src/credits/account-ledger";
import { ACCESS_STALE_MS } from "../../src/projects/access";
import { alarmOf, frozenClock, runNextAlarm, settle, type Clock } from "../clock";
import { watchD1 } from "../d1-calls";
import { call, chatsPath, creditsOf, expectProblem, ledger, newChat, peek, room, roomQueue, send, world, type World } from "../helpers";

const chargesOf = (accountId: string) =>
  runInDurableObject(ledger(accountId), (_: AccountLedger, state) =>
    state.storage.sql
      .exec<{ task_id: string }>("SELECT task_id FROM charges")
      .toArray()
      .map((r) => r.task_id),
  );
const listed = async (w: World) => (await call("GET", chatsPath(w), { token: w.token })).json.items as { id: string; latestAgentPreview: string; isWorking: boolean }[];

/** A member who has used the service a minute ago: every read-mostly copy is held, none is fresh. */
async function recentMember(clock: Clock) {
  const w = await world();
  const c = await newChat(w);
  expect((await send(w, c.id, "earlier")).status).toBe(202);
  await settle(room(c.id), clock);
  clock.advance(60_000);
  return { w, chatId: c.id };
}

describe("a D1 outage", () => {
  it("after the membership read, a message is still accepted, runs, is charged once and shows in the chat list", async () => {
    const clock = frozenClock();
    const { w, chatId } = await recentMember(clock);
    // D1 answers the membership read, then nothing more.
    const d1 = watchD1({ failWhen: (_, earlier) => earlier.some((c) => /project_members/.test(c.sql)) });
    expect((await send(w, chatId, "during the outage")).status).toBe(202);
    await settle(room(chatId), clock);
    expect(d1.calls.filter((c) => c.failed).length, "D1 was asked and failed").toBeGreaterThan(0);
    const items = await peek(w, chatId);
    expect(items.slice(0, 2).map((m) => [m.role, m.status, m.content.includes("during the outage")])).toEqual([
      ["owner", "success", true],
      ["user", null, true],
    ]);
    expect(await chargesOf(w.account.id)).toHaveLength(2);
    expect(await chargesOf(w.account.id)).toContain(items[0]!.taskId);
    expect(await creditsOf(w.account.id)).toBe(998);
    const [summary] = await listed(w);
    expect(summary).toMatchObject({ id: chatId, isWorking: false });
    expect(summary!.latestAgentPreview).toContain("during the outage");
  });

  it("serves the last values seen while they are recent, and then answers 503 with Retry-After, never 500", async () => {
    const clock = frozenClock();
    const { w, chatId } = await recentMember(clock);
    watchD1({ failWhen: () => true });
    const paths = [chatsPath(w), `${chatsPath(w)}/${chatId}`, `${chatsPath(w)}/${chatId}/messages`, `${chatsPath(w)}/${chatId}/queue`];
    for (const path of paths) expect((await call("GET", path, { token: w.token })).status, path).toBe(200);

    clock.advance(ACCESS_STALE_MS);
    for (const path of paths) {
      const r = await call("GET", path, { token: w.token });
      expectProblem(r, 503, "service_unavailable");
      expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
    }
    expectProblem(await send(w, chatId, "refused"), 503, "service_unavailable");
    // Sessions and the catalog read D1 too: refused the same way, or served from a copy.
    expectProblem(await call("GET", "/auth/api-tokens", { token: w.session }), 503, "service_unavailable");
    expect([200, 503]).toContain((await call("GET", "/v1/plans")).status);
  });

  it("holds a chat's queue while nothing says it may run, never throwing from the alarm, and resumes by itself once D1 is back", async () => {
    const clock = frozenClock();
    const { w, chatId } = await recentMember(clock);
    let down = false;
    const d1 = watchD1({ failWhen: () => down });
    expect((await send(w, chatId, "queued before the outage")).status).toBe(202);
    // The outage outlasts every copy the chat holds.
    clock.advance(ACCESS_STALE_MS);
    down = true;
    for (let look = 0; look < 5; look++) {
      expect(await runNextAlarm(room(chatId), clock), "the alarm ran and did not throw").toBe(true);
      expect(await alarmOf(room(chatId)), "and looks again later").toBeGreaterThan(clock.now());
    }
    expect((await roomQueue(chatId, w.projectId)).map((e) => [e.content, e.status])).toEqual([["queued before the outage", "queued"]]);
    expect(await creditsOf(w.account.id)).toBe(999);
    expect(d1.calls.filter((c) => c.failed).length).toBeGreaterThan(0);

    down = false;
    await settle(room(chatId), clock);
    expect((await peek(w, chatId))[0]).toMatchObject({ role: "owner", status: "success" });
    expect((await peek(w, chatId))[0]!.content).toContain("queued before the outage");
    expect(await creditsOf(w.account.id)).toBe(998);
  });
});
