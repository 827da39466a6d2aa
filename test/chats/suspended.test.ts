import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ChatRoom, SubmitRequest } from "../../src/chats/chat-room";
import { admin, creditsOf, env, eventually, newChat, peek, world } from "../helpers";

const setStatus = async (projectId: string, status: "active" | "suspended") => expect((await admin("PATCH", `/admin/projects/${projectId}`, { status })).status).toBe(200);
const request = (content: string): SubmitRequest => ({ idempotencyKey: crypto.randomUUID(), content, replyToMessageId: null, maintenance: false });

describe("a suspended project", () => {
  it("holds its queued submissions, uncharged, and runs them in order once it is active again", async () => {
    const w = await world();
    const c = await newChat(w);
    const stub = env.CHAT_ROOM.getByName(c.id);
    await setStatus(w.projectId, "suspended");
    // Accepted just before the suspension was seen (the routes answer 404 once it is).
    for (const content of ["first", "second"]) expect((await stub.submit(w.projectId, request(content))).kind).toBe("accepted");
    await runDurableObjectAlarm(stub);

    expect((await stub.queueEntries(w.projectId))!.map((e) => [e.content, e.status])).toEqual([
      ["first", "queued"],
      ["second", "queued"],
    ]);
    expect(await peek(w, c.id)).toEqual([]);
    expect(await creditsOf(w.account.id)).toBe(1000);
    const recheckIn = await runInDurableObject(stub, async (_: ChatRoom, state) => (await state.storage.getAlarm())! - Date.now());
    expect(recheckIn).toBeGreaterThan(0);
    expect(recheckIn).toBeLessThanOrEqual(5_000);

    await setStatus(w.projectId, "active");
    await runDurableObjectAlarm(stub);
    const items = await eventually("both replies", async () => {
      const page = await peek(w, c.id);
      return page.filter((m) => m.role === "owner" && m.status === "success").length === 2 && page;
    });
    expect(items.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["second", "first"]);
    expect(await creditsOf(w.account.id)).toBe(998);
  });
});
