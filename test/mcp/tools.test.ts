import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, vi } from "vitest";
import { exports } from "cloudflare:workers";
import { alarmOf, frozenClock, runNextAlarm, settle } from "../clock";
import { ChatRoom } from "../../src/chats/room/chat-room";
import { admin, call, chatsPath, env, newAccount, newToken, peek, room, send, signIn, world } from "../helpers";
import { callTool, connect, MCP_URL, success, toolProblem } from "./mcp-helpers";
import { it } from "../fixtures/chat";

const EXPECTED_TOOLS = {
  list_projects: "read",
  list_chats: "read",
  create_chat: "adds",
  get_chat: "read",
  send_message: "adds",
  read_messages: "read",
  get_queue: "read",
  get_submission: "read",
  stop_reply: "ends",
  cancel_submission: "ends",
  steer: "adds",
  get_credits: "read",
  get_usage: "read",
  get_question: "read",
  answer_question: "decides",
} as const;
const ANNOTATIONS = {
  read: { readOnlyHint: true, openWorldHint: false },
  adds: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  ends: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // Approving lets the agent act, so clients ask their person first; answering twice is not the same as once.
  decides: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

/** What /v1 answers for the same read, to compare a tool's structured answer with. */
const v1 = async (token: string, path: string) => {
  const r = await call("GET", path, { token });
  expect(r.status, r.text).toBe(200);
  return r.json;
};

describe("MCP tools, through the SDK's client", () => {
  it("lists every tool with a title, a description, both schemas and the contract's annotations", async ({ w }) => {
    const client = await connect(w.token);
    const { tools } = await client.listTools();
    for (const [name, kind] of Object.entries(EXPECTED_TOOLS)) {
      const t = tools.find((x) => x.name === name);
      expect(t, name).toBeDefined();
      expect(t!.title).toMatch(/\w/);
      expect(t!.description!.length).toBeGreaterThan(60);
      expect(t!.inputSchema.type).toBe("object");
      expect(t!.outputSchema?.type).toBe("object");
      expect(t!.annotations).toMatchObject(ANNOTATIONS[kind]);
    }
    // One type per schema node (nullable fields as anyOf): single-type dialects such as Gemini's accept them.
    expect(JSON.stringify(tools)).not.toMatch(/"type":\[/);
    const send = tools.find((t) => t.name === "send_message")!;
    expect(send.inputSchema.required).toEqual(expect.arrayContaining(["projectId", "chatId", "content"]));
    expect(send.inputSchema.properties).toMatchObject({ waitSeconds: { type: "integer", minimum: 0, maximum: 60 }, idempotencyKey: { format: "uuid" } });
  });

  it("drives a chat from creation to a finished reply, each answer the /v1 answer", async ({ w }) => {
    const client = await connect(w.token);
    expect(success(await callTool(client, "list_projects"))).toEqual(await v1(w.token, "/v1/projects"));
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "From an agent" }));
    expect(chat).toMatchObject({ title: "From an agent", isWorking: false });
    const sent = success(await callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "Write a haiku", waitSeconds: 10 }));
    expect(sent.submission).toMatchObject({ chatId: chat.id, disposition: "started" });
    expect(sent.state).toMatchObject({ id: sent.submission.submissionId, status: "done" });
    expect(sent.reply).toMatchObject({ id: sent.state.replyMessageId, role: "owner", status: "success", content: expect.stringContaining("Write a haiku") });
    expect(sent.replayed).toBeUndefined();
    const base = `${chatsPath(w)}/${chat.id}`;
    const ids = { projectId: w.projectId, chatId: chat.id };
    expect(success(await callTool(client, "get_submission", { ...ids, submissionId: sent.submission.submissionId }))).toEqual(
      await v1(w.token, `${base}/submissions/${sent.submission.submissionId}`),
    );
    expect(success(await callTool(client, "get_chat", ids))).toEqual(await v1(w.token, base));
    expect(success(await callTool(client, "get_queue", ids))).toEqual({ items: [] });
    const page = success(await callTool(client, "read_messages", ids));
    expect(page).toEqual(await v1(w.token, `${base}/messages?limit=20`));
    expect(page.items.map((m: { role: string }) => m.role)).toEqual(["owner", "user"]);
    const first = success(await callTool(client, "read_messages", { ...ids, limit: 1 }));
    expect(first.items).toEqual([page.items[0]]);
    expect(success(await callTool(client, "read_messages", { ...ids, limit: 1, cursor: first.nextCursor })).items).toEqual([page.items[1]]);
    expect(success(await callTool(client, "list_chats", { projectId: w.projectId }))).toEqual(await v1(w.token, chatsPath(w)));
    expect(success(await callTool(client, "list_chats", { projectId: w.projectId, archived: true }))).toEqual({ items: [] });
  });

  it("answers with waitSeconds 0 at once, the reply not yet there", async () => {
    frozenClock();
    const w = await world();
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "t" }));
    const sent = success(await callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "later" }));
    // The frozen clock holds the task's start (an alarm): the submission is being handed over, no reply yet.
    expect(sent.state).toMatchObject({ status: "dispatching", replyMessageId: null });
    expect(sent.reply).toBeNull();
  });

  it("answers when the wait ends, with the state as it then stands", async () => {
    frozenClock();
    const w = await world();
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "t" }));
    const started = performance.now();
    const sent = success(await callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "slow", waitSeconds: 1 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(sent.state.status).toBe("dispatching");
    expect(sent.reply).toBeNull();
  });

  it("sends progress as the reply grows while it waits", async ({ clock, w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "progress" }));
    const updates: { progress: number; total?: number; message?: string }[] = [];
    const pending = callTool(
      client,
      "send_message",
      { projectId: w.projectId, chatId: chat.id, content: "Tell me a long story", waitSeconds: 30 },
      { onprogress: (p) => updates.push(p) },
    );
    // The built-in agent writes its reply in four parts, one per alarm; each part becomes one notification.
    await vi.waitFor(async () => expect(await alarmOf(room(chat.id))).not.toBeNull(), { timeout: 5_000, interval: 20 });
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true); // the task starts: an empty reply, nothing to report
    for (let part = 1; part <= 3; part++) {
      expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
      await vi.waitFor(() => expect(updates).toHaveLength(part), { timeout: 5_000, interval: 20 });
    }
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    const result = success(await pending);
    expect(result.reply.status).toBe("success");
    expect(updates).toHaveLength(4);
    expect(updates.map((u) => u.message).join("")).toBe(result.reply.content);
    expect(updates.at(-1)!.progress).toBe([...result.reply.content].length);
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.progress).toBeGreaterThan(updates[i - 1]!.progress);
    expect(updates.every((u) => u.total === undefined)).toBe(true);
  });

  it("ends only the wait when the client hangs up: the reply still finishes", async ({ clock, w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "hang up" }));
    const waiting = {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "keep going", waitSeconds: 60 }, _meta: { progressToken: "p" } },
    };
    const response = await exports.default.fetch(
      new Request(MCP_URL, {
        method: "POST",
        body: JSON.stringify(waiting),
        headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      }),
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await response.body!.cancel();
    await vi.waitFor(async () => expect(await alarmOf(room(chat.id))).not.toBeNull(), { timeout: 5_000, interval: 20 });
    await settle(room(chat.id), clock);
    const [reply] = success(await callTool(client, "read_messages", { projectId: w.projectId, chatId: chat.id })).items;
    expect(reply).toMatchObject({ role: "owner", status: "success", content: expect.stringContaining("keep going") });
  });

  it("replays a send_message retried with its idempotencyKey, and sends twice without one", async ({ w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "keys" }));
    const args = { projectId: w.projectId, chatId: chat.id, content: "only once", idempotencyKey: crypto.randomUUID() };
    const first = success(await callTool(client, "send_message", args));
    const again = success(await callTool(client, "send_message", args));
    expect(first.replayed).toBeUndefined();
    expect(again.replayed).toBe(true);
    expect(again.submission).toEqual(first.submission);
    toolProblem(await callTool(client, "send_message", { ...args, content: "something else" }), "idempotency_key_reused");
    const { idempotencyKey: _, ...unkeyed } = args;
    const a = success(await callTool(client, "send_message", unkeyed));
    const b = success(await callTool(client, "send_message", unkeyed));
    expect(a.submission.submissionId).not.toBe(b.submission.submissionId);
    const key = crypto.randomUUID();
    const chatArgs = { projectId: w.projectId, title: "once", idempotencyKey: key };
    expect(success(await callTool(client, "create_chat", chatArgs)).id).toBe(success(await callTool(client, "create_chat", chatArgs)).id);
  });

  it("reads a replayed send's reply by its id, however long the history has grown since", async () => {
    const clock = frozenClock();
    const w = await world();
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "long" }));
    const args = { projectId: w.projectId, chatId: chat.id, content: "the first", idempotencyKey: crypto.randomUUID() };
    success(await callTool(client, "send_message", args));
    for (let i = 0; i < 11; i++) expect((await send(w, chat.id, `later ${i}`)).status).toBe(202);
    await settle(room(chat.id), clock);
    const history = await peek(w, chat.id);
    expect(history).toHaveLength(24);
    const pages = vi.spyOn(ChatRoom.prototype, "messages");
    const byId = vi.spyOn(ChatRoom.prototype, "message");
    const again = success(await callTool(client, "send_message", args));
    expect(again.replayed).toBe(true);
    // The first reply is the oldest but one: the history is never paged for it.
    expect(again.reply).toEqual(history.at(-2));
    expect(again.reply).toMatchObject({ id: again.state.replyMessageId, status: "success", content: expect.stringContaining("the first") });
    expect(pages).not.toHaveBeenCalled();
    expect(byId).toHaveBeenCalledTimes(1);
    // The spies see the object's calls: reading the history is one.
    success(await callTool(client, "read_messages", { projectId: w.projectId, chatId: chat.id }));
    expect(pages).toHaveBeenCalledTimes(1);
  });

  it("steers, cancels a queued submission and stops a working reply", async ({ clock, w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "control" }));
    const ids = { projectId: w.projectId, chatId: chat.id };
    const running = success(await callTool(client, "send_message", { ...ids, content: "first" }));
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true); // the task starts
    const { replyMessageId } = success(await callTool(client, "get_submission", { ...ids, submissionId: running.submission.submissionId }));
    const queued = success(await callTool(client, "send_message", { ...ids, content: "second" }));
    expect(queued.submission.disposition).toBe("queued");
    const steering = success(await callTool(client, "steer", { ...ids, content: "shorter, please" }));
    expect(steering).toMatchObject({ chatId: chat.id, disposition: "queued" });
    expect(success(await callTool(client, "get_queue", ids)).items.map((e: { status: string }) => e.status)).toEqual(["queued", "steering"]);
    const cancel = { ...ids, submissionId: queued.submission.submissionId };
    expect(success(await callTool(client, "cancel_submission", cancel))).toEqual({ cancelled: true });
    expect(success(await callTool(client, "cancel_submission", cancel))).toEqual({ cancelled: true });
    toolProblem(await callTool(client, "cancel_submission", { ...ids, submissionId: running.submission.submissionId }), "submission_started");
    const stop = { ...ids, messageId: replyMessageId };
    expect(success(await callTool(client, "stop_reply", stop))).toMatchObject({ id: replyMessageId, status: "interrupted_by_user" });
    expect(success(await callTool(client, "stop_reply", stop)).status).toBe("interrupted_by_user");
    toolProblem(await callTool(client, "stop_reply", { ...ids, messageId: crypto.randomUUID() }), "message_not_found");
  });
});

describe("MCP credits and usage tools", () => {
  it("reads the project's credits as the role may see them", async () => {
    const w = await world({ credits: 7 });
    const owner = await connect(w.token);
    const ids = { projectId: w.projectId };
    expect(success(await callTool(owner, "get_credits", ids))).toEqual({ balance: 7, taskCost: 1, canRun: true, credential: { creditLimit: null, creditsUsed: 0 } });
    expect(success(await callTool(owner, "get_credits", ids))).toEqual(await v1(w.token, `/v1/projects/${w.projectId}/credits`));
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    expect(success(await callTool(await connect(await newToken(await signIn(viewer))), "get_credits", ids))).toEqual({
      balance: null,
      taskCost: 1,
      canRun: true,
      credential: { creditLimit: null, creditsUsed: 0 },
    });
    toolProblem(await callTool(owner, "get_credits", { projectId: (await world()).projectId }), "not_found");
  });

  it("reads the project's usage per day, as /v1 answers it, and names bad dates", async ({ w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "usage" }));
    // An ended task's usage, handed to the project's list as a chat's sync hands it.
    const ended = { taskId: crypto.randomUUID(), endedAt: Date.now(), credits: 1, inputTokens: 120, outputTokens: 30 };
    await env.PROJECT_CHATS.getByName(w.projectId).upsert(w.projectId, chat, 1, [ended]);
    const usage = success(await callTool(client, "get_usage", { projectId: w.projectId }));
    expect(usage.items).toEqual([{ date: expect.any(String), tasks: 1, credits: 1, inputTokens: 120, outputTokens: 30 }]);
    expect(usage).toEqual(await v1(w.token, `/v1/projects/${w.projectId}/usage`));
    const today = new Date().toISOString().slice(0, 10);
    expect(success(await callTool(client, "get_usage", { projectId: w.projectId, from: today, to: today }))).toEqual(usage);
    const bad = toolProblem(await callTool(client, "get_usage", { projectId: w.projectId, from: "2026-02-30" }), "invalid_request");
    expect(bad.errors.map((e: { path: string }) => e.path)).toEqual(["from"]);
    // A range the route refuses is its own problem.
    toolProblem(await callTool(client, "get_usage", { projectId: w.projectId, from: today, to: "2020-01-01" }), "invalid_request");
  });
});

describe("MCP tool errors", () => {
  it("gives a viewer's write a forbidden problem, and lets the viewer read", async ({ w }) => {
    const viewer = await newAccount();
    expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${viewer.id}`, { role: "viewer" })).status).toBe(200);
    const client = await connect(await newToken(await signIn(viewer)));
    const chat = success(await callTool(await connect(w.token), "create_chat", { projectId: w.projectId, title: "owned" }));
    const problem = toolProblem(await callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "may I?" }), "forbidden");
    expect(problem.status).toBe(403);
    toolProblem(await callTool(client, "create_chat", { projectId: w.projectId, title: "mine" }), "forbidden");
    expect(success(await callTool(client, "list_projects")).items).toEqual([{ id: w.projectId, name: "test project", role: "viewer" }]);
    expect(success(await callTool(client, "get_chat", { projectId: w.projectId, chatId: chat.id })).id).toBe(chat.id);
  });

  it("answers another account's project as not_found, revealing nothing", async () => {
    const mine = await world();
    const theirs = await world();
    const client = await connect(mine.token);
    toolProblem(await callTool(client, "list_chats", { projectId: theirs.projectId }), "not_found");
    toolProblem(await callTool(client, "create_chat", { projectId: theirs.projectId, title: "intrude" }), "not_found");
  });

  it("refuses an id argument that is not a UUID, naming it, before any call is made", async () => {
    const w = await world();
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "ids" }));
    const sent = success(await callTool(client, "send_message", { projectId: w.projectId, chatId: chat.id, content: "queued" }));
    const ids = { projectId: w.projectId, chatId: chat.id, submissionId: sent.submission.submissionId, messageId: crypto.randomUUID() };
    const uses: [string, (keyof typeof ids)[], Record<string, unknown>][] = [
      ["list_chats", ["projectId"], {}],
      ["create_chat", ["projectId"], { title: "t" }],
      ["get_chat", ["projectId", "chatId"], {}],
      ["send_message", ["projectId", "chatId"], { content: "x" }],
      ["read_messages", ["projectId", "chatId"], {}],
      ["get_queue", ["projectId", "chatId"], {}],
      ["get_submission", ["projectId", "chatId", "submissionId"], {}],
      ["stop_reply", ["projectId", "chatId", "messageId"], {}],
      ["cancel_submission", ["projectId", "chatId", "submissionId"], {}],
      ["steer", ["projectId", "chatId"], { content: "x" }],
      ["get_credits", ["projectId"], {}],
      ["get_usage", ["projectId"], {}],
    ];
    const bads = ["..", ".", "", "../../auth/api-tokens", "%2e%2e", `${ids.chatId}/..`, "not-a-uuid"];
    const refused = async (name: string, args: Record<string, unknown>, field: string, bad: string) => {
      const problem = toolProblem(await callTool(client, name, { ...args, [field]: bad }), "invalid_request");
      expect(problem.errors, `${name} ${field}=${bad}`).toEqual([{ path: field, message: "must be a UUID" }]);
    };
    // Every id argument of every tool, each with one of the bad values (the token's 60 requests a minute bound the count).
    let turn = 0;
    for (const [name, fields, rest] of uses) {
      const args = { ...Object.fromEntries(fields.map((f) => [f, ids[f]])), ...rest };
      for (const field of fields) await refused(name, args, field, bads[turn++ % bads.length]!);
    }
    for (const bad of bads) await refused("cancel_submission", { projectId: w.projectId, chatId: chat.id }, "submissionId", bad);
    // Keys and reply targets are UUIDs too, refused as the route's own headers and fields would be.
    for (const [name, field, rest] of [
      ["create_chat", "idempotencyKey", { title: "t" }],
      ["steer", "idempotencyKey", { chatId: chat.id, content: "x" }],
      ["send_message", "replyToMessageId", { chatId: chat.id, content: "x" }],
    ] as const) {
      const problem = toolProblem(await callTool(client, name, { projectId: w.projectId, ...rest, [field]: ".." }), "invalid_request");
      expect(problem.errors.map((e: { path: string }) => e.path)).toEqual([field]);
    }
    // The submission an id like ".." might have reached elsewhere is untouched.
    expect(success(await callTool(client, "get_queue", { projectId: w.projectId, chatId: chat.id })).items).toHaveLength(1);
  });

  it("reads ids in any case as the same ids, as /v1 paths do", async ({ w }) => {
    const client = await connect(w.token);
    const upper = (id: string) => id.toUpperCase();
    const chat = success(await callTool(client, "create_chat", { projectId: upper(w.projectId), title: "cases" }));
    const ref = { projectId: upper(w.projectId), chatId: upper(chat.id) };
    const sent = success(await callTool(client, "send_message", { ...ref, content: "hello" }));
    expect(success(await callTool(client, "get_chat", ref)).id).toBe(chat.id);
    expect(success(await callTool(client, "get_submission", { ...ref, submissionId: upper(sent.submission.submissionId) })).id).toBe(sent.submission.submissionId);
  });

  it("answers a token without the scope with insufficient_scope", async ({ w }) => {
    const client = await connect(await newToken(w.session, ["chat:read"]));
    const problem = toolProblem(await callTool(client, "create_chat", { projectId: w.projectId, title: "no" }), "insufficient_scope");
    expect(problem.status).toBe(403);
    expect(success(await callTool(client, "list_chats", { projectId: w.projectId })).items).toEqual([]);
  });

  it("answers arguments that fail the schema with invalid_request naming each field", async ({ w }) => {
    const client = await connect(w.token);
    const missing = toolProblem(await callTool(client, "create_chat", { projectId: w.projectId, color: "red" }), "invalid_request");
    expect(missing.errors).toEqual(
      expect.arrayContaining([
        { path: "title", message: "required" },
        { path: "color", message: "unknown field" },
      ]),
    );
    const send = { projectId: w.projectId, chatId: crypto.randomUUID(), content: "x" };
    for (const [field, value] of [
      ["waitSeconds", 61],
      ["waitSeconds", 1.5],
      ["idempotencyKey", "not-a-uuid"],
      ["content", ""],
      ["replyToMessageId", "nope"],
    ] as const) {
      const problem = toolProblem(await callTool(client, "send_message", { ...send, [field]: value }), "invalid_request");
      expect(
        problem.errors.map((e: { path: string }) => e.path),
        field,
      ).toEqual([field]);
    }
    const limit = toolProblem(await callTool(client, "read_messages", { projectId: w.projectId, chatId: send.chatId, limit: 0 }), "invalid_request");
    expect(limit.errors[0].path).toBe("limit");
    // A cursor the chat never gave out is the route's own 400.
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "c" }));
    toolProblem(await callTool(client, "read_messages", { projectId: w.projectId, chatId: chat.id, cursor: "bogus" }), "invalid_request");
  });

  it("answers an unknown tool with a JSON-RPC invalid params error", async ({ w }) => {
    const client = await connect(w.token);
    const error = await callTool(client, "drop_database").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
  });
});
