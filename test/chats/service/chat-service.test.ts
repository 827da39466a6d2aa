import { describe, expect } from "vitest";
import { hashSecret } from "../../../src/auth/secrets";
import type { Scope } from "../../../src/auth/scopes";
import { ChatService, type Served } from "../../../src/chats/service/chat-service";
import { type Refusal, refusalError } from "../../../src/chats/service/refusals";
import { problemBody } from "../../../src/http/problem";
import { it } from "../../fixtures/chat";
import { call, env, type World, world } from "../../helpers";

/** The service as a channel makes it for one request of w's token (its scopes narrowed when asked). */
async function serviceOf(w: World, scopes: Scope[] = ["chat:read", "chat:write"], token = w.token) {
  const caller = { accountId: w.account.id, scopes, gateName: await hashSecret(token), atCreditLimit: false };
  const background: Promise<unknown>[] = [];
  const service = new ChatService({ env, caller, requestId: "service-test", waitUntil: (work) => background.push(work) });
  return Object.assign(service, { background });
}

/** The refusal's code and status, as every channel renders them. */
const refused = (answer: Served<unknown>) => {
  if (answer.ok) throw new Error(`not refused: ${JSON.stringify(answer.body)}`);
  return { status: answer.problem.status, code: answer.problem.code };
};

const send = (content: string, idempotencyKey: string = crypto.randomUUID()) => ({
  kind: "send" as const,
  idempotencyKey,
  content,
  replyToMessageId: null,
  ifBusy: "queue" as const,
});

describe("the chat service every channel calls", () => {
  it("sends once per key, answers a replay as the first, and reads what the send made", async ({ w, chat }) => {
    const chats = await serviceOf(w);
    const ref = { projectId: w.projectId, chatId: chat.id };
    const key = crypto.randomUUID();
    const first = await chats.submit(ref, send("hello", key));
    const again = await chats.submit(ref, send("hello", key));
    if (!first.ok || !again.ok) throw new Error("refused");
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(again.body).toEqual(first.body);
    const state = await chats.submission(ref, first.body.submissionId);
    expect(state.ok && state.body.id).toBe(first.body.submissionId);
    const read = await chats.getChat(ref);
    expect(read.ok && typeof read.eventId).toBe("number");
    // Ids are read in any case, as a path's are.
    const upper = await chats.submission({ projectId: w.projectId.toUpperCase(), chatId: chat.id.toUpperCase() }, first.body.submissionId.toUpperCase());
    expect(upper.ok).toBe(true);
  });

  it("refuses by kind, each with the status and code of the one table", async ({ w, chat }) => {
    const chats = await serviceOf(w);
    const ref = { projectId: w.projectId, chatId: chat.id };
    const other = await world();
    const unknown = crypto.randomUUID();
    expect(refused(await chats.getChat({ projectId: other.projectId, chatId: chat.id }))).toEqual({ status: 404, code: "not_found" });
    expect(refused(await chats.getChat({ projectId: w.projectId, chatId: unknown }))).toEqual({ status: 404, code: "not_found" });
    expect(refused(await chats.getChat({ projectId: w.projectId, chatId: "not-a-uuid" }))).toEqual({ status: 404, code: "not_found" });
    expect(refused(await chats.submission(ref, unknown))).toEqual({ status: 404, code: "submission_not_found" });
    expect(refused(await chats.message(ref, unknown))).toEqual({ status: 404, code: "message_not_found" });
    expect(refused(await chats.stopReply(ref, unknown))).toEqual({ status: 404, code: "message_not_found" });
    expect(refused(await chats.question(ref, unknown))).toEqual({ status: 404, code: "question_not_found" });
    expect(refused(await chats.messages(ref, "not-a-cursor", 10))).toEqual({ status: 400, code: "invalid_request" });
    const key = crypto.randomUUID();
    await chats.submit(ref, send("one", key));
    expect(refused(await chats.submit(ref, send("another", key)))).toEqual({ status: 409, code: "idempotency_key_reused" });
    const readOnly = await serviceOf(w, ["chat:read"]);
    expect(refused(await readOnly.submit(ref, send("no")))).toEqual({ status: 403, code: "insufficient_scope" });
    expect((await readOnly.getChat(ref)).ok).toBe(true);
  });

  it("follows a chat with one of the token's stream places, and refuses too_many_streams with Retry-After when none is free", async ({ w, chat }) => {
    const chats = await serviceOf(w);
    const ref = { projectId: w.projectId, chatId: chat.id };
    const opened = [];
    for (let i = 0; i < 10; i++) {
      const followed = await chats.follow(ref, null);
      if (!followed.ok) throw new Error(followed.problem.code);
      opened.push(followed.body);
    }
    const full = await chats.follow(ref, null);
    expect(refused(full)).toEqual({ status: 429, code: "too_many_streams" });
    expect(!full.ok && Number(full.problem.options.headers?.["retry-after"])).toBeGreaterThan(0);
    for (const stream of opened) {
      await stream.stream.cancel();
      await stream.unfollow();
    }
  });

  it("says a revoked token is no longer admitted", async ({ w }) => {
    const created = await call("POST", "/auth/api-tokens", {
      token: w.session,
      body: { name: "to revoke", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    const chats = await serviceOf(w, ["chat:read"], created.json.token);
    expect((await chats.stillAdmitted()).ok).toBe(true);
    expect((await call("DELETE", `/auth/api-tokens/${created.json.item.id}`, { token: w.session })).status).toBe(204);
    expect(refused(await chats.stillAdmitted())).toEqual({ status: 401, code: "unauthorized" });
  });
});

describe("the refusals table", () => {
  it("renders each kind as the problem every channel shows", () => {
    const kinds: [Refusal, number, string][] = [
      [{ kind: "not_found" }, 404, "not_found"],
      [{ kind: "archived" }, 409, "chat_archived"],
      [{ kind: "cancelled" }, 409, "submission_cancelled"],
      [{ kind: "question_not_pending", status: "answered" }, 409, "question_not_pending"],
      [{ kind: "answer_does_not_fit", why: "pick one" }, 400, "answer_does_not_fit"],
      [{ kind: "credit_limit" }, 403, "token_credit_limit"],
      [{ kind: "chat_busy" }, 409, "chat_busy"],
      [{ kind: "queue_full" }, 409, "queue_full"],
      [{ kind: "credential_gone" }, 401, "unauthorized"],
    ];
    for (const [refusal, status, code] of kinds) expect(problemBody(refusalError(refusal), "r"), refusal.kind).toMatchObject({ status, code, instance: "urn:request:r" });
    expect(refusalError({ kind: "question_not_pending", status: "answered" }).message).toBe("This question is answered; it takes no more answers.");
    expect(refusalError({ kind: "too_many_streams", retryAfterSeconds: 7 }).options.headers).toEqual({ "retry-after": "7" });
  });
});
