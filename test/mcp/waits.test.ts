import { exports } from "cloudflare:workers";
import { describe, expect, vi } from "vitest";
import { MAX_STREAMS_PER_TOKEN } from "../../src/auth/token-gate";
import { ChatRoom } from "../../src/chats/room/chat-room";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { admin, call, chatsPath, expectProblem, inDays, newChat, peek, room, roomQueue, type World } from "../helpers";
import { it } from "../fixtures/chat";
import { callTool, connect, MCP_URL, pulse, success, toolProblem, untilListening } from "./mcp-helpers";

async function tokenWithId(w: World) {
  const r = await call("POST", "/auth/api-tokens", { token: w.session, body: { name: "waits", scopes: ["chat:read", "chat:write"], expiresAt: inDays(1) } });
  expect(r.status, r.text).toBe(201);
  return { token: r.json.token as string, id: r.json.item.id as string };
}

/** A send_message call with a wait, as raw JSON-RPC over fetch, so the test holds the request's signal and its answer's body. */
function waitingCall(token: string, args: Record<string, unknown>, { signal, progress }: { signal?: AbortSignal; progress?: boolean } = {}) {
  const body = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "send_message", arguments: args, ...(progress ? { _meta: { progressToken: "p" } } : {}) } };
  return exports.default.fetch(
    new Request(MCP_URL, {
      method: "POST",
      body: JSON.stringify(body),
      signal,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    }),
  );
}

describe("an MCP wait holds a stream place", () => {
  it(`takes one of the token's ${MAX_STREAMS_PER_TOKEN} places; with none free it sends nothing and answers too_many_streams`, async ({ clock, w, chat }) => {
    const client = await connect(w.token);
    const args = (content: string, waitSeconds = 30) => ({ projectId: w.projectId, chatId: chat.id, content, waitSeconds });
    // The frozen clock holds every task: each wait stays open until the test runs the chat's alarms.
    const waits = Array.from({ length: MAX_STREAMS_PER_TOKEN }, (_, i) => callTool(client, "send_message", args(`wait ${i}`)));
    await untilListening(chat.id, MAX_STREAMS_PER_TOKEN);
    const refused = toolProblem(await callTool(client, "send_message", args("one too many")), "too_many_streams");
    expect(refused.status).toBe(429);
    expect((await peek(w, chat.id)).some((m) => m.content.includes("one too many"))).toBe(false);
    expect((await roomQueue(chat.id, w.projectId)).map((e) => e.content)).not.toContain("one too many");
    expectProblem(await call("GET", `${chatsPath(w)}/${chat.id}/events`, { token: w.token }), 429, "too_many_streams");
    // Without a wait nothing is held: the send goes through.
    expect(success(await callTool(client, "send_message", args("no wait", 0))).submission.disposition).toBe("queued");

    await settle(room(chat.id), clock);
    const answers = (await Promise.all(waits)).map((r) => success(r));
    expect(answers.map((a) => a.reply.status)).toEqual(Array(MAX_STREAMS_PER_TOKEN).fill("success"));
    await untilListening(chat.id, 0);
  });

  it("costs the chat object no calls while its reply waits in the queue, and a few per change after", async ({ clock, w, chat }) => {
    const client = await connect(w.token);
    const reads = [vi.spyOn(ChatRoom.prototype, "submissionState"), vi.spyOn(ChatRoom.prototype, "message"), vi.spyOn(ChatRoom.prototype, "messages")];
    const calls = () => reads.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    const waiting = callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "patience", waitSeconds: 60 });
    await untilListening(chat.id, 1);
    const afterSend = calls();
    // Time passes with nothing changing: keep-alives reach the wait, on the stream, ahead of everything below.
    for (let i = 0; i < 5; i++) await pulse(chat.id);
    expect(calls()).toBe(afterSend);

    // The task's start, its four parts and its end: each change that names the submission costs one state read and one reply read.
    // The wait has taken every keep-alive before the end (one stream, in order): a read per keep-alive would pass this bound.
    // Five alarms step the task; a sixth is the chat list's update, 2 s after the send, which the wait does not read.
    expect(await settle(room(chat.id), clock)).toBe(6);
    const answer = success(await waiting);
    expect(answer.reply.status).toBe("success");
    expect(calls() - afterSend).toBeLessThanOrEqual(2 * 5);
  });
});

describe("an MCP wait ends with its caller", () => {
  it("ends when the client of a JSON answer hangs up, freeing its place", async ({ w, chat }) => {
    const hangUp = new AbortController();
    const answer = waitingCall(w.token, { projectId: w.projectId, chatId: chat.id, content: "I will leave", waitSeconds: 60 }, { signal: hangUp.signal });
    await untilListening(chat.id, 1);
    hangUp.abort();
    await answer.catch(() => undefined);
    await vi.waitFor(
      async () => {
        await pulse(chat.id);
        expect(await room(chat.id).listenerCount()).toBe(0);
      },
      { timeout: 15_000, interval: 50 },
    );
  });

  it("ends when the client of an event-stream answer hangs up, freeing its place", async ({ w, chat }) => {
    const response = await waitingCall(w.token, { projectId: w.projectId, chatId: chat.id, content: "streamed", waitSeconds: 60 }, { progress: true });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await untilListening(chat.id, 1);
    await response.body!.cancel();
    await vi.waitFor(
      async () => {
        await pulse(chat.id);
        expect(await room(chat.id).listenerCount()).toBe(0);
      },
      { timeout: 15_000, interval: 50 },
    );
  });

  it("ends at the next pulse after its token is revoked, with unauthorized and nothing written after", async ({ clock, w, chat }) => {
    const { token, id } = await tokenWithId(w);
    const client = await connect(token);
    const waiting = callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "revoke me", waitSeconds: 60 });
    await untilListening(chat.id, 1);
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true); // the task starts
    expect((await call("DELETE", `/auth/api-tokens/${id}`, { token: w.session })).status).toBe(204);
    // The reply's first part and its end, written after the revocation: the answer must tell neither.
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    await pulse(chat.id);
    // Its other parts, its end and the chat list's update.
    expect(await settle(room(chat.id), clock)).toBe(4);
    const result = await waiting;
    expect(toolProblem(result, "unauthorized").status).toBe(401);
    expect(JSON.stringify(result)).not.toContain("revoke me");
    expect(await room(chat.id).listenerCount()).toBe(0);
    await settle(room(chat.id), clock);
  });

  it("ends at the next pulse once the account loses access to the project, with not_found", async ({ clock: _heldTasks, w, chat }) => {
    const client = await connect(w.token);
    const waiting = callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "suspend me", waitSeconds: 60 });
    await untilListening(chat.id, 1);
    expect((await admin("PATCH", `/admin/projects/${w.projectId}`, { status: "suspended" })).status).toBe(200);
    await pulse(chat.id);
    toolProblem(await waiting, "not_found");
    expect(await alarmOf(room(chat.id))).not.toBeNull();
  });
});

describe("an MCP wait on a chat that does not exist", () => {
  it("answers not_found before anything is sent", async ({ w }) => {
    const client = await connect(w.token);
    const other = await newChat(w, "elsewhere");
    toolProblem(await callTool(client, "send_message", { projectId: w.projectId, chatId: crypto.randomUUID(), content: "x", waitSeconds: 5 }), "not_found");
    expect(await room(other.id).listenerCount()).toBe(0);
  });
});
