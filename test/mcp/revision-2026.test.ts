import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { exports } from "cloudflare:workers";
import { describe, expect, vi } from "vitest";
import { TOOLS } from "../../src/mcp/tools";
import { alarmOf, runNextAlarm, settle } from "../clock";
import { call, newToken, room, world } from "../helpers";
import { it } from "../fixtures/chat";
import { callTool as callToolV1, connect as connectV1, MCP_URL, flatAnswer, MODERN, modernPost } from "./mcp-helpers";

type V2Client = Client;

/** The official v2 SDK's client, its requests served by the Worker's fetch handler. */
async function connectV2(token: string, versionNegotiation?: { mode: "auto" | "legacy" }) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
  });
  const client = new Client({ name: "mcp-v2-test", version: "1.0.0" }, versionNegotiation ? { versionNegotiation } : {});
  await client.connect(transport);
  return client;
}

/** A successful call's structured answer; its one text item holds the same JSON. */
async function answer(client: V2Client, name: string, args: Record<string, unknown> = {}, onprogress?: (p: { progress: number; message?: string }) => void) {
  const result = await client.callTool({ name, arguments: args }, onprogress ? { onprogress } : undefined);
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as any;
}

describe("MCP revision 2026-07-28, with the v2 SDK's client", () => {
  it("negotiates 2026-07-28 when the client opts in, and lists the very tools the 2025 revisions list", async () => {
    const w = await world();
    const client = await connectV2(w.token, { mode: "auto" });
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getServerVersion()).toMatchObject({ name: "project-chat" });
    const { tools } = await client.listTools();
    const legacy = await (await connectV1(w.token)).listTools();
    expect(tools).toEqual(legacy.tools);
  });

  it("works through every tool on 2026-07-28, waits and progress included", async ({ clock, w }) => {
    const client = await connectV2(w.token, { mode: "auto" });
    const called = new Set<string>();
    const use = (name: string, args: Record<string, unknown> = {}, onprogress?: (p: { progress: number; message?: string }) => void) => {
      called.add(name);
      return answer(client, name, args, onprogress);
    };
    expect((await use("list_projects")).items.map((p: { id: string }) => p.id)).toEqual([w.projectId]);
    const chat = await use("create_chat", { projectId: w.projectId, title: "modern" });
    const ids = { projectId: w.projectId, chatId: chat.id };
    const updates: { progress: number; message?: string }[] = [];
    const waiting = use("send_message", { ...ids, content: "Tell me a story", waitSeconds: 30 }, (p) => updates.push(p));
    await vi.waitFor(async () => expect(await alarmOf(room(chat.id))).not.toBeNull(), { timeout: 5_000, interval: 20 });
    while (await runNextAlarm(room(chat.id), clock)) if ((await room(chat.id).listenerCount()) === 0) break;
    const sent = await waiting;
    expect(sent.reply).toMatchObject({ status: "success", content: expect.stringContaining("Tell me a story") });
    expect(updates.map((u) => u.message).join("")).toBe(sent.reply.content);
    expect(await use("get_submission", { ...ids, submissionId: sent.submission.submissionId })).toMatchObject({ status: "done" });
    expect((await use("get_chat", ids)).id).toBe(chat.id);
    expect((await use("read_messages", { ...ids, limit: 2 })).items).toHaveLength(2);
    expect((await use("list_chats", { projectId: w.projectId })).items.map((c: { id: string }) => c.id)).toContain(chat.id);

    // The agent asks (the built-in agent's /ask), and the question is read and answered.
    await use("send_message", { ...ids, content: "/ask Which color?" });
    await settle(room(chat.id), clock);
    const { pendingQuestionId } = await answer(client, "get_chat", ids);
    expect(await use("get_question", { ...ids, questionId: pendingQuestionId })).toMatchObject({ kind: "text", status: "pending" });
    expect((await use("answer_question", { ...ids, questionId: pendingQuestionId, answer: flatAnswer({ text: "Blue" }) })).submission).toMatchObject({
      questionId: pendingQuestionId,
    });
    await settle(room(chat.id), clock);

    const running = await use("send_message", { ...ids, content: "first" });
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true); // the task starts
    const queued = await use("send_message", { ...ids, content: "second" });
    expect(await use("steer", { ...ids, content: "shorter" })).toMatchObject({ disposition: "queued" });
    expect((await use("get_queue", ids)).items.map((e: { status: string }) => e.status)).toEqual(["queued", "steering"]);
    expect(await use("cancel_submission", { ...ids, submissionId: queued.submission.submissionId })).toEqual({ cancelled: true });
    const { replyMessageId } = await answer(client, "get_submission", { ...ids, submissionId: running.submission.submissionId });
    expect(await use("stop_reply", { ...ids, messageId: replyMessageId })).toMatchObject({ status: "interrupted_by_user" });
    expect(await use("get_credits", { projectId: w.projectId })).toMatchObject({ taskCost: 1 });
    expect(await use("get_usage", { projectId: w.projectId })).toEqual({ items: expect.any(Array) });
    // Another answer to the first message, in a fork of the chat.
    const [first] = (await answer(client, "read_messages", { ...ids, limit: 100 })).items.slice(-1);
    const forked = await use("fork_chat", { ...ids, atMessageId: first.id, rerun: true, title: "another take" });
    expect(forked.chat).toMatchObject({ title: "another take", forkedFrom: { chatId: chat.id, messageId: first.id } });
    expect(forked.submissionId).toEqual(expect.any(String));
    expect([...called].sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it("answers problems the same way on 2026-07-28: tool errors in the result, an unknown tool as invalid params", async () => {
    const w = await world();
    const reader = await connectV2(await newToken(w.session, ["chat:read"]), { mode: "auto" });
    const refused = await reader.callTool({ name: "create_chat", arguments: { projectId: w.projectId, title: "no" } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content[0] as { text: string }).text).code).toBe("insufficient_scope");
    const invalid = await reader.callTool({ name: "get_chat", arguments: { projectId: "nope" } });
    expect(JSON.parse((invalid.content[0] as { text: string }).text).code).toBe("invalid_request");
    const unknown = await reader.callTool({ name: "no_such_tool", arguments: {} }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
  });

  it("keeps the 2025 revisions: the v2 client's default connect, and the v1 client, get 2025-11-25", async () => {
    const w = await world();
    const client = await connectV2(w.token);
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    expect((await answer(client, "list_projects")).items).toHaveLength(1);
    const v1 = await connectV1(w.token);
    expect(((await callToolV1(v1, "list_projects")).structuredContent as { items: unknown[] }).items).toHaveLength(1);
  });
});

describe("MCP revision 2026-07-28 on the wire", () => {
  it("answers server/discover with every revision it speaks, its capabilities and who it is", async () => {
    const w = await world();
    const r = await modernPost(w.token, "server/discover");
    expect(r.status, r.text).toBe(200);
    expect(r.json.result).toMatchObject({
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
      capabilities: { tools: { listChanged: false } },
      instructions: expect.stringContaining("list_projects"),
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "project-chat", version: expect.any(String) } },
    });
  });

  it("marks results complete and tells how long the tool list may be kept; a 2025 result is as it was", async () => {
    const w = await world();
    const listed = await modernPost(w.token, "tools/list");
    expect(listed.json.result).toMatchObject({ resultType: "complete", ttlMs: expect.any(Number), cacheScope: "public" });
    const called = await modernPost(w.token, "tools/call", { name: "list_projects", arguments: {} });
    expect(called.json.result).toMatchObject({ resultType: "complete", structuredContent: { items: [expect.objectContaining({ id: w.projectId })] } });
    const legacy = await call("POST", "/mcp", {
      token: w.token,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    expect(legacy.json.result.resultType).toBeUndefined();
    expect(legacy.json.result.ttlMs).toBeUndefined();
  });

  it("takes a tool's name in Mcp-Name as it is or as a base64 sentinel", async () => {
    const w = await world();
    const sentinel = `=?base64?${btoa("list_projects")}?=`;
    expect((await modernPost(w.token, "tools/call", { name: "list_projects", arguments: {} }, { "mcp-name": sentinel })).json.result.isError).toBeFalsy();
  });

  it("refuses what 2026-07-28 refuses, with its JSON-RPC error on HTTP 400", async () => {
    const w = await world();
    const cases: [Awaited<ReturnType<typeof modernPost>>, number][] = [
      // The headers must agree with the body.
      [await modernPost(w.token, "tools/list", {}, { "mcp-protocol-version": null }), -32020],
      [await modernPost(w.token, "tools/list", {}, { "mcp-protocol-version": "2025-11-25" }), -32020],
      [await modernPost(w.token, "tools/list", {}, { "mcp-method": null }), -32020],
      [await modernPost(w.token, "tools/list", {}, { "mcp-method": "tools/call" }), -32020],
      [await modernPost(w.token, "tools/call", { name: "list_projects", arguments: {} }, { "mcp-name": null }), -32020],
      [await modernPost(w.token, "tools/call", { name: "list_projects", arguments: {} }, { "mcp-name": "get_chat" }), -32020],
      [await modernPost(w.token, "tools/call", { name: "list_projects", arguments: {} }, { "mcp-name": "=?base64?!!!?=" }), -32020],
      // The envelope must be whole, and name a revision this server speaks.
      [await modernPost(w.token, "tools/list", {}, {}, { "io.modelcontextprotocol/clientCapabilities": "all" }), -32602],
      // A 2025 body under a 2026-07-28 header, answered as JSON or (with progress asked) as a stream: refused before either.
      [await modernPost(w.token, "tools/list", {}, {}, { "io.modelcontextprotocol/protocolVersion": "2025-06-18" }), -32020],
      [
        await modernPost(
          w.token,
          "tools/call",
          { name: "send_message", arguments: { projectId: w.projectId, chatId: crypto.randomUUID(), content: "hi", waitSeconds: 5 } },
          {},
          { "io.modelcontextprotocol/protocolVersion": "2025-06-18", progressToken: 1 },
        ),
        -32020,
      ],
      // A body that names a revision the header does not is a mismatch, whichever one this server speaks.
      [await modernPost(w.token, "tools/list", {}, {}, { "io.modelcontextprotocol/protocolVersion": "2027-01-01" }), -32020],
      [await modernPost(w.token, "tools/list", {}, { "mcp-protocol-version": null }, { "io.modelcontextprotocol/protocolVersion": "2027-01-01" }), -32022],
    ];
    for (const [r, code] of cases) {
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code, message: expect.any(String) } });
    }
    expect(cases.at(-1)![0].json.error.data.supported).toContain(MODERN);
    // The header names 2026-07-28 but the body carries no envelope.
    const bare = await call("POST", "/mcp", {
      token: w.token,
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
    });
    expect(bare.status).toBe(400);
    expect(bare.json.error.code).toBe(-32602);
  });

  it("has no initialize on 2026-07-28, and answers an initialize for an older revision with 2025-06-18", async () => {
    const w = await world();
    const modern = await modernPost(w.token, "initialize", { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: "x", version: "1" } });
    expect(modern.status).toBe(404);
    expect(modern.json.error.code).toBe(-32601);
    const old = await call("POST", "/mcp", {
      token: w.token,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "x", version: "1" } } },
    });
    expect(old.json.result.protocolVersion).toBe("2025-06-18");
  });
});
