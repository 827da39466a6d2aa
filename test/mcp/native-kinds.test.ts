import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { sql } from "../chats/control-helpers";
import { chatNow, questionOf } from "../chats/question-helpers";
import { settle } from "../clock";
import { call, chatsPath, room } from "../helpers";
import { it } from "../fixtures/chat";
import { elicitingClient, modernPost, whileWaiting } from "./mcp-helpers";

/** Each kind the built-in agent asks, what a person's form sends back, and the answer it must become. */
const KINDS = [
  { kind: "text", ask: "/ask Your name?", response: { action: "accept", content: { text: "Ada" } }, answer: { text: "Ada" } },
  { kind: "choice", ask: "/choose+ Which? | Red | Green | Blue", response: { action: "accept", content: { choices: ["1", "3"] } }, answer: { optionIds: ["1", "3"] } },
  {
    kind: "approval",
    ask: "/approve deploy",
    response: { action: "accept", content: { decision: "deny", reason: "not today" } },
    answer: { decision: "deny", reason: "not today" },
  },
  { kind: "connection", ask: "/connect github", response: { action: "accept" }, answer: { connected: true } },
] as const;
const MODES = { elicitation: { form: {}, url: {} } };
const TASKS = { ...MODES, extensions: { "io.modelcontextprotocol/tasks": {} } };
const meta = (declared: Record<string, unknown>) => ({ "io.modelcontextprotocol/clientCapabilities": declared });

describe("every channel answers every kind of question", () => {
  for (const { kind, ask, response, answer } of KINDS) {
    it(`tasks: ${kind}`, async ({ clock, w, chat }) => {
      const created = (await modernPost(w.token, "tools/call", { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: ask } }, {}, meta(TASKS)))
        .json.result;
      await settle(room(chat.id), clock);
      const get = () => modernPost(w.token, "tasks/get", { taskId: created.taskId }, { "mcp-name": created.taskId }, meta(TASKS));
      const asked = (await get()).json.result;
      expect(asked.status).toBe("input_required");
      const [questionId] = Object.keys(asked.inputRequests);
      const updated = await modernPost(
        w.token,
        "tasks/update",
        { taskId: created.taskId, inputResponses: { [questionId!]: response } },
        { "mcp-name": created.taskId },
        meta(TASKS),
      );
      expect(updated.json.result).toEqual({ resultType: "complete" });
      expect(await questionOf(w, chat.id, questionId!)).toMatchObject({ answer });
      await settle(room(chat.id), clock);
      expect((await get()).json.result).toMatchObject({ status: "completed", result: { structuredContent: { answered: [{ questionId }] } } });
    });

    it(`MRTR: ${kind}`, async ({ clock, w, chat }) => {
      const args = { projectId: w.projectId, chatId: chat.id, content: ask, waitSeconds: 30 };
      const toolCall = (extra: Record<string, unknown> = {}) => modernPost(w.token, "tools/call", { name: "send_message", arguments: args, ...extra }, {}, meta(MODES));
      const first = (await whileWaiting(chat.id, clock, toolCall())).json.result;
      expect(first.resultType).toBe("input_required");
      const [questionId] = Object.keys(first.inputRequests);
      const done = (await whileWaiting(chat.id, clock, toolCall({ requestState: first.requestState, inputResponses: { [questionId!]: response } }))).json.result;
      expect(done.structuredContent.answered).toEqual([{ questionId, submissionId: expect.any(String) }]);
      expect(await questionOf(w, chat.id, questionId!)).toMatchObject({ status: "answered", answer });
    });

    it(`2025 elicitation/create: ${kind}`, async ({ clock, w, chat }) => {
      const { client, asked } = await elicitingClient(w.token, () => response as never);
      const result = await whileWaiting(
        chat.id,
        clock,
        client.callTool({ name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: ask, waitSeconds: 30 } }, CallToolResultSchema),
      );
      expect(asked).toHaveLength(1);
      const { answered } = result.structuredContent as { answered: { questionId: string }[] };
      expect(await questionOf(w, chat.id, answered[0]!.questionId)).toMatchObject({ status: "answered", answer });
    });
  }
});

describe("answers racing across channels", () => {
  it("lets exactly one of a task's updates, an MRTR-style answer under the same derived key and a REST answer win", async ({ clock, w, chat }) => {
    const created = (
      await modernPost(w.token, "tools/call", { name: "send_message", arguments: { projectId: w.projectId, chatId: chat.id, content: "/ask Name?" } }, {}, meta(TASKS))
    ).json.result;
    await settle(room(chat.id), clock);
    const { pendingQuestionId: questionId } = await chatNow(w, chat.id);
    const update = (text: string) =>
      modernPost(
        w.token,
        "tasks/update",
        { taskId: created.taskId, inputResponses: { [questionId!]: { action: "accept", content: { text } } } },
        { "mcp-name": created.taskId },
        meta(TASKS),
      );
    const rest = call("POST", `${chatsPath(w)}/${chat.id}/questions/${questionId}/answer`, {
      token: w.token,
      headers: { "idempotency-key": crypto.randomUUID() },
      body: { text: "C" },
    });
    const [a, b, c] = await Promise.all([update("A"), update("B"), rest]);
    expect(a.json.result).toEqual({ resultType: "complete" });
    expect(b.json.result).toEqual({ resultType: "complete" });
    const question = await questionOf(w, chat.id, questionId!);
    expect(question.status).toBe("answered");
    // The REST answer either won (202) or found the question closed (409); one answer's submission either way.
    expect([202, 409]).toContain(c.status);
    const answers = await sql<{ n: number }>(chat.id, "SELECT COUNT(*) AS n FROM submissions WHERE question_id = ?", questionId);
    expect(answers[0]!.n).toBe(1);
    expect(["A", "B", "C"]).toContain((question.answer as { text: string }).text);
  });
});
