import { describe, expect } from "vitest";
import { hashSecret } from "../../src/auth/secrets";
import { runNextAlarm, settle } from "../clock";
import { crashBeforeCall } from "../doubles/stand-ins";
import { admin, call, chatsPath, creditsOf, env, expectProblem, inDays, newChat, peek, queueOf, room, send, type World, world } from "../helpers";
import { submissionOf } from "../chats/control-helpers";
import { it } from "../fixtures/chat";

const tokenBody = (extra: Record<string, unknown> = {}) => ({ name: "limited", scopes: ["chat:read", "chat:write"], expiresAt: inDays(30), ...extra });
const createToken = (w: World, extra?: Record<string, unknown>) => call("POST", "/auth/api-tokens", { token: w.session, body: tokenBody(extra) });
const patchToken = (w: World, id: string, body: unknown, session = w.session) => call("PATCH", `/auth/api-tokens/${id}`, { token: session, body });
const recordOf = async (w: World, id: string) => (await call("GET", "/auth/api-tokens", { token: w.session })).json.items.find((t: { id: string }) => t.id === id);
const credentialOf = async (w: World, token: string) => (await call("GET", `/v1/projects/${w.projectId}/credits`, { token })).json;
const sendWith = (w: World, chatId: string, token: string, content: string, key: string = crypto.randomUUID()) =>
  call("POST", `${chatsPath(w)}/${chatId}/messages`, { token, headers: { "idempotency-key": key }, body: { content } });
const maintenance = async (enabled: boolean) => expect((await admin("PUT", "/admin/maintenance", { enabled })).status).toBe(200);

/** w with a second token of the account that carries a credit limit. */
async function limited(w: World, limit: number) {
  const r = await createToken(w, { creditLimit: limit });
  expect(r.status, r.text).toBe(201);
  return { token: r.json.token as string, id: r.json.item.id as string };
}

describe("a token's credit limit", () => {
  it("is set at creation (1 to 1000000000, or null), shown with creditsUsed, and anything else is a 400 naming it", async ({ w }) => {
    for (const [limit, shown] of [
      [5, 5],
      [null, null],
      [undefined, null],
      [1_000_000_000, 1_000_000_000],
    ] as const) {
      const r = await createToken(w, limit === undefined ? {} : { creditLimit: limit });
      expect(r.status, r.text).toBe(201);
      expect(r.json.item).toMatchObject({ creditLimit: shown, creditsUsed: 0 });
      expect(await recordOf(w, r.json.item.id)).toMatchObject({ creditLimit: shown, creditsUsed: 0 });
    }
    for (const bad of [0, -1, 1.5, 1_000_000_001, "5", true, [5], {}]) {
      const r = await createToken(w, { creditLimit: bad });
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors.map((e: { path: string }) => e.path)).toContain("creditLimit");
    }
    expect((await call("GET", "/auth/api-tokens", { token: w.session })).json.items).toHaveLength(5);
  });

  it("PATCH sets, lowers and removes it, for the caller's own unrevoked tokens only, with exactly { creditLimit }", async ({ w }) => {
    const { id } = await limited(w, 3);
    const ok = await patchToken(w, id, { creditLimit: 7 });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ id, name: "limited", creditLimit: 7, creditsUsed: 0 });
    for (const body of [{}, { creditLimit: 0 }, { creditLimit: 2.5 }, { creditLimit: "7" }, { creditLimit: 7, name: "x" }, null]) {
      expectProblem(await patchToken(w, id, body), 400, "invalid_request");
    }
    expectProblem(await call("PATCH", `/auth/api-tokens/${id}`, { token: w.session, raw: "{no", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expect((await recordOf(w, id)).creditLimit).toBe(7);
    const stranger = await world();
    expectProblem(await patchToken(w, id, { creditLimit: 1 }, stranger.session), 404, "not_found");
    expectProblem(await patchToken(w, crypto.randomUUID(), { creditLimit: 1 }), 404, "not_found");
    expectProblem(await patchToken(w, id, { creditLimit: 1 }, w.token), 401, "unauthorized");
    expect((await patchToken(w, id, { creditLimit: null })).json.creditLimit).toBeNull();
    expect((await call("DELETE", `/auth/api-tokens/${id}`, { token: w.session })).status).toBe(204);
    expectProblem(await patchToken(w, id, { creditLimit: 1 }), 404, "not_found");
  });

  it("counts this token's tasks and not another's; at the limit a send, steer or answer is 403 token_credit_limit after the key rules and before chat_archived", async ({
    clock,
    w,
    chat,
  }) => {
    const L = await limited(w, 1);
    const key = crypto.randomUUID();
    const first = await sendWith(w, chat.id, L.token, "the one task allowed", key);
    expect(first.status).toBe(202);
    await settle(room(chat.id), clock);
    await send(w, chat.id, "another token's task");
    await settle(room(chat.id), clock);
    expect(await recordOf(w, L.id)).toMatchObject({ creditLimit: 1, creditsUsed: 1 });
    expect((await credentialOf(w, L.token)).credential).toEqual({ creditLimit: 1, creditsUsed: 1 });
    expect((await credentialOf(w, L.token)).canRun).toBe(false);
    expect(await credentialOf(w, w.token)).toMatchObject({ canRun: true, credential: { creditLimit: null, creditsUsed: 1 } });

    // A replay still answers the first outcome; a new send, steer or answer is refused and stores nothing.
    const replay = await sendWith(w, chat.id, L.token, "the one task allowed", key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    const refusedKey = crypto.randomUUID();
    expectProblem(await sendWith(w, chat.id, L.token, "over the limit", refusedKey), 403, "token_credit_limit");
    const steer = await call("POST", `${chatsPath(w)}/${chat.id}/steer`, { token: L.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "nor this" } });
    expectProblem(steer, 403, "token_credit_limit");
    expect((await queueOf(w, chat.id)).items).toEqual([]);
    expect((await peek(w, chat.id)).some((m) => m.content === "over the limit" || m.content === "nor this")).toBe(false);
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
    expectProblem(await sendWith(w, chat.id, L.token, "archived", refusedKey), 403, "token_credit_limit");
    expect((await call("POST", `${chatsPath(w)}/${chat.id}/restore`, { token: w.token })).status).toBe(200);

    // Raising the limit lets the refused key through as a new submission.
    expect((await patchToken(w, L.id, { creditLimit: 2 })).json).toMatchObject({ creditLimit: 2, creditsUsed: 1 });
    const again = await sendWith(w, chat.id, L.token, "over the limit", refusedKey);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotency-replayed")).toBeNull();
  });

  it("at dispatch is exact: of parallel tasks with room for R, exactly R run; the rest fail token_credit_limit with nothing charged", async ({ clock, w }) => {
    const L = await limited(w, 3);
    const chats = await Promise.all(Array.from({ length: 6 }, () => newChat(w)));
    await maintenance(true);
    const sent = await Promise.all(chats.map((c, i) => sendWith(w, c.id, L.token, `task ${i}`)));
    await maintenance(false);
    // Every chat dispatches at once: their charges race for the token's room.
    await Promise.all(chats.map((c) => settle(room(c.id), clock)));
    const states = await Promise.all(chats.map((c, i) => submissionOf(w, c.id, sent[i]!.json.submissionId)));
    const ran = states.filter((s) => s.state!.status === "done");
    const failed = states.filter((s) => s.state!.status === "failed");
    expect(ran).toHaveLength(3);
    expect(failed).toHaveLength(3);
    for (const s of failed) expect(s.state).toMatchObject({ failure: { code: "token_credit_limit" }, credits: { charged: 0, refunded: 0 } });
    expect(failed[0]!.state!.failure!.message).toContain("credit limit");
    expect(await recordOf(w, L.id)).toMatchObject({ creditsUsed: 3 });
    expect(await creditsOf(w.account.id)).toBe(997);
    // Each failed entry stays in its queue, failed.
    for (const [i, c] of chats.entries()) {
      if (states[i]!.state!.status === "failed") expect((await queueOf(w, c.id)).items.map((e) => e.status)).toEqual(["failed"]);
    }
  });

  it("when the owner cannot pay, the failure is the owner's and nothing counts; when both would refuse, it is the limit's", async ({ clock }) => {
    const w = await world({ credits: 0 });
    const L = await limited(w, 5);
    const chat = await newChat(w);
    const sent = await sendWith(w, chat.id, L.token, "nobody pays");
    await settle(room(chat.id), clock);
    expect((await submissionOf(w, chat.id, sent.json.submissionId)).state!.failure!.code).toBe("insufficient_credits");
    expect(await recordOf(w, L.id)).toMatchObject({ creditLimit: 5, creditsUsed: 0 });
    expect((await credentialOf(w, L.token)).canRun).toBe(false);

    expect((await patchToken(w, L.id, { creditLimit: 1 })).status).toBe(200);
    await env.ACCOUNT_LEDGER.getByName(w.account.id).setBalance(w.account.id, 1);
    await sendWith(w, chat.id, L.token, "uses the one credit");
    await settle(room(chat.id), clock);
    await env.ACCOUNT_LEDGER.getByName(w.account.id).setBalance(w.account.id, 0);
    expect((await patchToken(w, L.id, { creditLimit: 2 })).status).toBe(200);
    await maintenance(true);
    const both = await sendWith(w, chat.id, L.token, "neither");
    expect((await patchToken(w, L.id, { creditLimit: 1 })).status).toBe(200);
    await maintenance(false);
    await settle(room(chat.id), clock);
    expect((await submissionOf(w, chat.id, both.json.submissionId)).state!.failure!.code).toBe("token_credit_limit");
  });

  it("stays exact when the chat object crashes between the token's count and the owner's charge: counted once, charged once", async ({ clock, w, chat }) => {
    const L = await limited(w, 2);
    crashBeforeCall(room(chat.id).id, "ACCOUNT_LEDGER", "charge");
    const sent = await sendWith(w, chat.id, L.token, "counted, then a crash");
    await expect(runNextAlarm(room(chat.id), clock)).rejects.toThrow();
    // The restarted object finds the submission still dispatching and repeats each step: each answers as done once.
    await settle(room(chat.id), clock);
    expect((await submissionOf(w, chat.id, sent.json.submissionId)).state).toMatchObject({ status: "done", credits: { charged: 1, refunded: 0 } });
    expect(await creditsOf(w.account.id)).toBe(999);
    expect(await recordOf(w, L.id)).toMatchObject({ creditsUsed: 1 });
    const gate = env.TOKEN_GATE.getByName(await hashSecret(L.token));
    expect(await gate.creditStanding()).toEqual({ creditLimit: 2, creditsUsed: 1 });
  });

  it("stays exact when the chat object crashes after the owner's ledger refused, before the token's count was let go", async ({ clock }) => {
    const w = await world({ credits: 0 });
    const L = await limited(w, 2);
    const chat = await newChat(w);
    crashBeforeCall(room(chat.id).id, "TOKEN_GATE", "releaseCredits");
    const sent = await sendWith(w, chat.id, L.token, "nobody pays, then a crash");
    await expect(runNextAlarm(room(chat.id), clock)).rejects.toThrow();
    await settle(room(chat.id), clock);
    expect((await submissionOf(w, chat.id, sent.json.submissionId)).state).toMatchObject({ status: "failed", failure: { code: "insufficient_credits" } });
    expect(await recordOf(w, L.id)).toMatchObject({ creditLimit: 2, creditsUsed: 0 });
  });
});
