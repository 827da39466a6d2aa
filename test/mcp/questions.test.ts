import { describe, expect, vi } from "vitest";
import { localReply } from "../../src/agent/local";
import { MAX_STREAMS_PER_TOKEN } from "../../src/auth/token-gate";
import { ask, questionOf } from "../chats/question-helpers";
import { settle } from "../clock";
import { call, chatsPath, room } from "../helpers";
import { openEvents } from "../sse";
import { callTool, connect, success, toolProblem, flatAnswer } from "./mcp-helpers";
import { it } from "../fixtures/chat";

describe("MCP questions, through the SDK's client", () => {
  it("asks a /choose question through send_message, reads it, answers it with answer_question and gets the next reply", async ({ w }) => {
    const client = await connect(w.token);
    const chat = success(await callTool(client, "create_chat", { projectId: w.projectId, title: "Questions" }));
    const ids = { projectId: w.projectId, chatId: chat.id };
    const asked = success(await callTool(client, "send_message", { ...ids, content: "/choose Pick a color | Red | Green | Blue", waitSeconds: 10 }));
    expect(asked.reply).toMatchObject({ status: "success", content: "Pick a color", questionId: expect.any(String) });
    const q = asked.question;
    expect(q).toMatchObject({ id: asked.reply.questionId, kind: "choice", status: "pending", prompt: "Pick a color", multiSelect: false, allowText: false });
    expect(q.options.map((o: { label: string }) => o.label)).toEqual(["Red", "Green", "Blue"]);
    expect(success(await callTool(client, "get_chat", ids))).toMatchObject({ isAwaitingUser: true, pendingQuestionId: q.id });

    const read = success(await callTool(client, "get_question", { ...ids, questionId: q.id }));
    expect(read).toEqual((await call("GET", `${chatsPath(w)}/${chat.id}/questions/${q.id}`, { token: w.token })).json);
    expect(read).toEqual(q);

    const key = crypto.randomUUID();
    const answered = success(
      await callTool(client, "answer_question", { ...ids, questionId: q.id, answer: flatAnswer({ optionIds: ["2"] }), idempotencyKey: key, waitSeconds: 10 }),
    );
    expect(answered.submission).toMatchObject({ chatId: chat.id, disposition: "started", questionId: q.id });
    expect(answered.state).toMatchObject({ id: answered.submission.submissionId, status: "done" });
    expect(answered.reply).toMatchObject({ status: "success", content: localReply({ content: "Green" }), questionId: null });
    expect(answered.question, "the next reply asks nothing").toBeNull();
    expect(answered.replayed).toBeUndefined();
    expect(success(await callTool(client, "get_question", { ...ids, questionId: q.id }))).toMatchObject({
      status: "answered",
      answer: { optionIds: ["2"] },
      submissionId: answered.submission.submissionId,
    });

    // Retried with its key: the first answer, replayed; with a new key, the question is no longer pending.
    const again = success(await callTool(client, "answer_question", { ...ids, questionId: q.id, answer: flatAnswer({ optionIds: ["2"] }), idempotencyKey: key }));
    expect(again).toMatchObject({ submission: answered.submission, replayed: true });
    const twice = toolProblem(await callTool(client, "answer_question", { ...ids, questionId: q.id, answer: flatAnswer({ optionIds: ["1"] }) }), "question_not_pending");
    expect(twice.detail).toMatch(/answered/);
  });

  it("answers a question the reply asked without waiting with question null, and tells an answer that does not fit", async ({ w, chat }) => {
    const client = await connect(w.token);
    const ids = { projectId: w.projectId, chatId: chat.id };
    const sent = success(await callTool(client, "send_message", { ...ids, content: "/approve deploy to production" }));
    expect(sent.question).toBeNull();
    expect(sent.reply).toBeNull();
    const approval = success(await callTool(client, "send_message", { ...ids, content: "/approve really deploy", waitSeconds: 10 })).question;
    expect(approval).toMatchObject({ kind: "approval", action: { name: "demo_action", summary: "really deploy", input: {} } });
    toolProblem(await callTool(client, "answer_question", { ...ids, questionId: approval.id, answer: flatAnswer({ optionIds: ["1"] }) }), "answer_does_not_fit");
    const shape = toolProblem(await callTool(client, "answer_question", { ...ids, questionId: approval.id, answer: flatAnswer({ decision: "perhaps" }) }), "invalid_request");
    expect(JSON.stringify(shape.errors)).toContain("answer");
    toolProblem(await callTool(client, "get_question", { ...ids, questionId: crypto.randomUUID() }), "question_not_found");
    const denied = success(
      await callTool(client, "answer_question", { ...ids, questionId: approval.id, answer: flatAnswer({ decision: "deny", reason: "not on a Friday" }), waitSeconds: 10 }),
    );
    expect(denied.reply.content).toBe(localReply({ content: "Denied. not on a Friday" }));
  });

  it("waits on a stream place as send_message does: with none free it answers too_many_streams and answers nothing", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Still there?");
    const streams = await Promise.all(Array.from({ length: MAX_STREAMS_PER_TOKEN }, () => openEvents(`${chatsPath(w)}/${chat.id}/events`, w.token)));
    try {
      const client = await connect(w.token);
      const ids = { projectId: w.projectId, chatId: chat.id, questionId: q.id };
      toolProblem(await callTool(client, "answer_question", { ...ids, answer: flatAnswer({ text: "yes" }), waitSeconds: 5 }), "too_many_streams");
      expect(await questionOf(w, chat.id, q.id)).toMatchObject({ status: "pending", answer: null });
      // Without a wait nothing is held: the answer goes through.
      expect(success(await callTool(client, "answer_question", { ...ids, answer: flatAnswer({ text: "yes" }) })).submission.questionId).toBe(q.id);
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it("sends the reply to an answer as progress while it grows, as send_message does", async ({ clock, w, chat }) => {
    const { question: q } = await ask(w, chat.id, clock, "/ask Which colour?");
    const client = await connect(w.token);
    const updates: { progress: number; message?: string }[] = [];
    const pending = callTool(
      client,
      "answer_question",
      { projectId: w.projectId, chatId: chat.id, questionId: q.id, answer: flatAnswer({ text: "Teal" }), waitSeconds: 30 },
      { onprogress: (p) => updates.push(p) },
    );
    // Once the answer is in, the built-in agent writes its reply in four parts, one per alarm.
    await vi.waitFor(async () => expect((await questionOf(w, chat.id, q.id)).status).toBe("answered"), { timeout: 5_000, interval: 20 });
    await settle(room(chat.id), clock);
    const answered = success(await pending);
    expect(answered.reply).toMatchObject({ status: "success", content: localReply({ content: "Teal" }) });
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.map((u) => u.message).join("")).toBe(answered.reply.content);
  });

  it("describes answer_question's answer as flat, required, nullable fields and marks it destructive", async ({ w }) => {
    const client = await connect(w.token);
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "answer_question")!;
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(["projectId", "chatId", "questionId", "answer"]));
    const answer = (tool.inputSchema.properties as Record<string, { properties: Record<string, { anyOf?: unknown[] }>; required: string[]; additionalProperties: boolean }>)
      .answer!;
    const fields = ["optionIds", "text", "decision", "reason", "connected", "decline"];
    expect(Object.keys(answer.properties).sort()).toEqual([...fields].sort());
    expect([...answer.required].sort()).toEqual([...fields].sort());
    expect(answer.additionalProperties).toBe(false);
    for (const field of fields) expect(answer.properties[field]!.anyOf, field).toContainEqual({ type: "null" });
    expect(tool.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(tool.outputSchema!.properties).toHaveProperty("question");
    expect(tools.find((t) => t.name === "send_message")!.outputSchema!.properties).toHaveProperty("answered");
  });

  it("names the fields of an answer that is not exactly one body, and sends nothing", async ({ clock, w, chat }) => {
    const client = await connect(w.token);
    const { question: q } = await ask(w, chat.id, clock, "/approve deploy");
    const ids = { projectId: w.projectId, chatId: chat.id, questionId: q.id };
    const two = toolProblem(await callTool(client, "answer_question", { ...ids, answer: flatAnswer({ decision: "approve", connected: true }) }), "invalid_request");
    expect(JSON.stringify(two.errors)).toContain('"path":"answer');
    const none = toolProblem(await callTool(client, "answer_question", { ...ids, answer: flatAnswer({}) }), "invalid_request");
    expect(JSON.stringify(none.errors)).toContain('"path":"answer');
    // A field left out is missing, as the schema requires every one of them.
    toolProblem(await callTool(client, "answer_question", { ...ids, answer: { decision: "approve" } }), "invalid_request");
    expect(await questionOf(w, chat.id, q.id)).toMatchObject({ status: "pending" });
  });

  it("has no empty schema in any tool's input or output schema", async ({ w }) => {
    const { tools } = await (await connect(w.token)).listTools();
    const empties: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${at}[${i}]`);
        return;
      }
      if (typeof node !== "object" || node === null) return;
      if (Object.keys(node).length === 0) empties.push(at);
      for (const [key, value] of Object.entries(node)) if (key !== "properties" && key !== "default") walk(value, `${at}.${key}`);
      const properties = (node as { properties?: Record<string, unknown> }).properties;
      for (const [name, value] of Object.entries(properties ?? {})) walk(value, `${at}.properties.${name}`);
    };
    for (const t of tools) {
      walk(t.inputSchema, `${t.name}.input`);
      walk(t.outputSchema, `${t.name}.output`);
    }
    expect(empties).toEqual([]);
  });
});
