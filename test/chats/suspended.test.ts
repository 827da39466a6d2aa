import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect } from "vitest";
import { ACCESS_FRESH_MS } from "../../src/projects/access";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { SENT_BY_TEST, admin, creditsOf, peek, room, roomQueue } from "../helpers";
import { it } from "../fixtures/chat";
import type { SubmitRequest } from "../../src/chats/room-calls";

const setStatus = async (projectId: string, status: "active" | "suspended") => expect((await admin("PATCH", `/admin/projects/${projectId}`, { status })).status).toBe(200);
// What a Worker saw a little while ago, before the suspension: old enough that the chat reads the project again.
const request = (content: string, ownerAccountId: string): SubmitRequest => {
  const at = Date.now() - ACCESS_FRESH_MS;
  return {
    kind: "send",
    idempotencyKey: crypto.randomUUID(),
    content,
    replyToMessageId: null,
    ...SENT_BY_TEST,
    seen: { maintenance: { value: false, at }, project: { value: { status: "active", ownerAccountId }, at } },
  };
};

describe("a suspended project", () => {
  it("holds its queued submissions, uncharged, and runs them in order once it is active again", async ({ clock, w, chat }) => {
    const stub = room(chat.id);
    await setStatus(w.projectId, "suspended");
    // Accepted just before the suspension was seen (the routes answer 404 once it is).
    for (const content of ["first", "second"]) expect((await stub.submit(w.projectId, request(content, w.account.id))).kind).toBe("accepted");
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    expect((await roomQueue(chat.id, w.projectId)).map((e) => [e.content, e.status])).toEqual([
      ["first", "queued"],
      ["second", "queued"],
    ]);
    expect(await peek(w, chat.id)).toEqual([]);
    expect(await creditsOf(w.account.id)).toBe(1000);
    const recheckIn = (await alarmOf(stub))! - clock.now();
    expect(recheckIn).toBeGreaterThan(0);
    expect(recheckIn).toBeLessThanOrEqual(5_000);
    expect(await runNextAlarm(stub, clock), "still suspended at the next look").toBe(true);
    expect(await peek(w, chat.id)).toEqual([]);

    await setStatus(w.projectId, "active");
    await settle(stub, clock);
    const items = await peek(w, chat.id);
    expect(items.filter((m) => m.role === "owner" && m.status === "success")).toHaveLength(2);
    expect(items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["second", "first"]);
    expect(await creditsOf(w.account.id)).toBe(998);
  });
});
