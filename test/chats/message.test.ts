import { describe, expect, it } from "vitest";
import { frozenClock, settle } from "../clock";
import { call, chatsPath, expectProblem, newChat, newToken, peek, room, send, world } from "../helpers";

const messagePath = (w: { projectId: string }, chatId: string, messageId: string) => `${chatsPath(w)}/${chatId}/messages/${messageId}`;

describe("GET one message", () => {
  it("answers each message of the chat as the history shows it, the id in any case", async () => {
    const clock = frozenClock();
    const w = await world();
    const c = await newChat(w);
    expect((await send(w, c.id, "hello")).status).toBe(202);
    await settle(room(c.id), clock);
    const history = await peek(w, c.id);
    expect(history.map((m) => m.role)).toEqual(["owner", "user"]);
    for (const message of history) {
      const r = await call("GET", messagePath(w, c.id, message.id), { token: w.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual(message);
    }
    const upper = await call("GET", messagePath(w, c.id, history[0]!.id.toUpperCase()), { token: w.token });
    expect(upper.json).toEqual(history[0]);
  });

  it("answers 401 without a token and 403 insufficient_scope without chat:read", async () => {
    const w = await world();
    const c = await newChat(w);
    expectProblem(await call("GET", messagePath(w, c.id, crypto.randomUUID())), 401, "unauthorized");
    const writeOnly = await newToken(w.session, ["chat:write"]);
    const denied = await call("GET", messagePath(w, c.id, crypto.randomUUID()), { token: writeOnly });
    expectProblem(denied, 403, "insufficient_scope");
    expect(denied.headers.get("www-authenticate")).toContain('scope="chat:read"');
  });

  it("answers 404 not_found for an unknown chat or a chat of another project, and message_not_found for an id the chat does not have", async () => {
    const clock = frozenClock();
    const w = await world();
    const other = await world();
    const c = await newChat(w);
    const elsewhere = await newChat(other);
    expect((await send(other, elsewhere.id, "not yours")).status).toBe(202);
    await settle(room(elsewhere.id), clock);
    const [foreign] = await peek(other, elsewhere.id);
    expectProblem(await call("GET", messagePath(w, crypto.randomUUID(), crypto.randomUUID()), { token: w.token }), 404, "not_found");
    expectProblem(await call("GET", messagePath(w, "not-a-chat", crypto.randomUUID()), { token: w.token }), 404, "not_found");
    expectProblem(await call("GET", messagePath(w, elsewhere.id, foreign!.id), { token: w.token }), 404, "not_found");
    // Another chat's message is not this chat's.
    expectProblem(await call("GET", messagePath(w, c.id, foreign!.id), { token: w.token }), 404, "message_not_found");
    expectProblem(await call("GET", messagePath(w, c.id, crypto.randomUUID()), { token: w.token }), 404, "message_not_found");
    for (const id of ["not-a-uuid", "12345", "x".repeat(300)]) {
      expectProblem(await call("GET", messagePath(w, c.id, id), { token: w.token }), 404, "message_not_found");
    }
  });
});
