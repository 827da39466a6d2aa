import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { chatNow, questionOf } from "../chats/question-helpers";
import { call, chatsPath, newToken } from "../helpers";
import { it } from "../fixtures/chat";
import { elicitingClient, initialize, post, whileWaiting } from "./mcp-helpers";

const initializeWith = (capabilities: Record<string, unknown>, protocolVersion = "2025-11-25") => ({
  ...initialize(protocolVersion),
  params: { ...initialize(protocolVersion).params, capabilities },
});

describe("elicitation on the 2025 revisions", () => {
  it("gives a sealed session id only to a client that declared elicitation", async ({ w }) => {
    const declared = await post(initializeWith({ elicitation: {} }), {}, w.token);
    expect(declared.headers.get("mcp-session-id")).toMatch(/^[A-Za-z0-9._~-]{1,1024}$/);
    const none = await post(initializeWith({}), {}, w.token);
    expect(none.headers.get("mcp-session-id")).toBeNull();
  });

  it("sends elicitation/create on the waiting call's stream, takes the client's POSTed response as the answer and answers the next reply", async ({ clock, w, chat }) => {
    const { client, asked } = await elicitingClient(w.token, () => ({ action: "accept", content: { choice: "2" } }));
    const call = client.callTool(
      { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/choose Which theme? | Light | Dark", waitSeconds: 30 } },
      CallToolResultSchema,
    );
    const result = await whileWaiting(chat.id, clock, call);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: "form", message: "Which theme?", requestedSchema: { required: ["choice"] } });
    const structured = result.structuredContent as { answered: { questionId: string; submissionId: string }[]; reply: { content: string } };
    expect(structured.answered).toHaveLength(1);
    expect(await questionOf(w, chat.id, structured.answered[0]!.questionId)).toMatchObject({ status: "answered", answer: { optionIds: ["2"] } });
    expect(structured.reply.content).toContain("Dark");
  });

  it("asks a connection in url mode with its elicitationId on 2025-11-25", async ({ clock, w, chat }) => {
    const { client, asked } = await elicitingClient(w.token, () => ({ action: "accept" }));
    const call = client.callTool(
      { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/connect github", waitSeconds: 30 } },
      CallToolResultSchema,
    );
    const result = await whileWaiting(chat.id, clock, call);
    expect(asked[0]).toMatchObject({ mode: "url", elicitationId: expect.any(String), url: expect.stringMatching(/\/connections\/github$/) });
    const { answered } = result.structuredContent as { answered: { questionId: string }[] };
    expect(answered[0]!.questionId).toBe(asked[0]!.elicitationId);
    expect(await questionOf(w, chat.id, answered[0]!.questionId)).toMatchObject({ status: "answered", answer: { connected: true } });
  });

  it("goes on sending progress while it waits, as the reply grows", async ({ clock, w, chat }) => {
    const { client } = await elicitingClient(w.token, () => ({ action: "cancel" }));
    const progress: { progress: number; message?: string }[] = [];
    const call = client.callTool(
      { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "write a long answer about the sea", waitSeconds: 30 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p) },
    );
    const result = await whileWaiting(chat.id, clock, call);
    const reply = (result.structuredContent as { reply: { content: string } }).reply.content;
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
    expect(progress.map((p) => p.message).join("")).toBe(reply);
  });

  it("ends the waiting call with the problem when the answer itself is refused (the chat was archived meanwhile)", async ({ clock, w, chat }) => {
    const { client } = await elicitingClient(w.token, async () => {
      // The person takes a while; meanwhile someone archives the chat.
      expect((await call("POST", `${chatsPath(w)}/${chat.id}/archive`, { token: w.token })).status).toBe(200);
      return { action: "accept", content: { text: "Ada" } };
    });
    const result = await whileWaiting(
      chat.id,
      clock,
      client.callTool({ name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 30 } }, CallToolResultSchema),
    );
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toMatchObject({ code: "chat_archived" });
    expect((await chatNow(w, chat.id)).isAwaitingUser).toBe(true);
  });

  it("keeps the question pending on cancel, and answers today's result when the wait ends", async ({ clock, w, chat }) => {
    const { client, asked } = await elicitingClient(w.token, () => ({ action: "cancel" }));
    const call = client.callTool({ name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 2 } }, CallToolResultSchema);
    const result = await whileWaiting(chat.id, clock, call);
    expect(asked).toHaveLength(1);
    expect(result.structuredContent).toMatchObject({ question: { kind: "text", status: "pending" }, answered: [] });
    expect((await chatNow(w, chat.id)).isAwaitingUser).toBe(true);
  });

  it("answers 400 to a response whose id it did not send, another credential's, or expired; 202 and nothing more to a repeat or an error", async ({ clock, w, chat }) => {
    let id: string | undefined;
    const { client } = await elicitingClient(w.token, () => ({ action: "cancel" }));
    // Catch the request's id as the client sees it, then answer it by hand below.
    client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      id = String(extra.requestId);
      return { action: "cancel" };
    });
    await whileWaiting(
      chat.id,
      clock,
      client.callTool({ name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 2 } }, CallToolResultSchema),
    );
    expect(id).toBeDefined();
    const response = (result: unknown) => ({ jsonrpc: "2.0", id, result });
    const forged = await post({ jsonrpc: "2.0", id: "v1.forged", result: { action: "accept", content: { text: "x" } } }, {}, w.token);
    expect(forged.status).toBe(400);
    expect(forged.json.code).toBe("invalid_request");
    expect((await post(response({ action: "accept", content: { text: "x" } }), {}, await newToken(w.session))).status).toBe(400);
    expect((await post({ jsonrpc: "2.0", id, error: { code: -1, message: "no" } }, {}, w.token)).status).toBe(202);
    const { pendingQuestionId } = await chatNow(w, chat.id);
    expect((await questionOf(w, chat.id, pendingQuestionId!)).status).toBe("pending");
    // A late response (the wait has ended) still answers, once.
    expect((await post(response({ action: "accept", content: { text: "Ada" } }), {}, w.token)).status).toBe(202);
    expect((await post(response({ action: "accept", content: { text: "Grace" } }), {}, w.token)).status).toBe(202);
    expect(await questionOf(w, chat.id, pendingQuestionId!)).toMatchObject({ status: "answered", answer: { text: "Ada" } });
    clock.advance(3_600_001);
    expect((await post(response({ action: "decline" }), {}, w.token)).status).toBe(400);
  });

  it("ignores a session id that does not verify: served without elicitation, never 404", async ({ clock, w, chat }) => {
    const r = await whileWaiting(
      chat.id,
      clock,
      post(
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/ask Name?", waitSeconds: 2 } },
        },
        { "mcp-session-id": "v1.not-a-session" },
        w.token,
      ),
    );
    expect(r.status).toBe(200);
    expect(r.json.result.structuredContent).toMatchObject({ question: { status: "pending" }, answered: [] });
  });
});
