import { describe, expect, it } from "vitest";
import { WAITING_PROMPT } from "../../src/agent/asked-question";
import { Question } from "../../src/chats/question-schemas";
import { frozenClock, runNextAlarm, settle } from "../clock";
import { call, chatOf, chatsPath, expectProblem, newChat, peek, room, send, world, type World } from "../helpers";
import { acceptingAgent, agentCalls, fakeAgent, runningTask } from "./fake-agent";

const pendingOf = async (w: World, chatId: string) => {
  const id = (await chatOf(w, chatId)).pendingQuestionId;
  return id === null ? null : Question.parse((await call("GET", `${chatsPath(w)}/${chatId}/questions/${id}`, { token: w.token })).json);
};
const answer = (w: World, chatId: string, questionId: string, body: unknown) =>
  call("POST", `${chatsPath(w)}/${chatId}/questions/${questionId}/answer`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body });

async function opened() {
  const clock = frozenClock();
  const agent = acceptingAgent();
  const w = await world();
  const c = await newChat(w);
  return { clock, agent, w, c };
}

describe("an http agent's question", () => {
  it("asks each kind from its result: a choice with its ids, or 1, 2, … when it gives none; an approval; a connection; text", async () => {
    const { clock, w, c } = await opened();
    const asked = [
      [
        {
          kind: "choice",
          prompt: "Which plan?",
          options: [
            { id: "pro", label: "Pro", description: "for teams" },
            { id: "free", label: "Free" },
          ],
          multiSelect: false,
        },
        {
          options: [
            { id: "pro", label: "Pro", description: "for teams" },
            { id: "free", label: "Free", description: null },
          ],
          multiSelect: false,
          allowText: false,
        },
      ],
      [
        { kind: "choice", prompt: "Which?", options: [{ label: "A", description: null }, { label: "B" }], multiSelect: true, allowText: true },
        {
          options: [
            { id: "1", label: "A", description: null },
            { id: "2", label: "B", description: null },
          ],
          multiSelect: true,
          allowText: true,
        },
      ],
      [
        { kind: "approval", prompt: "May I delete it?", action: { name: "delete_file", summary: "delete notes.txt", input: { path: "notes.txt" } }, options: null },
        { action: { name: "delete_file", summary: "delete notes.txt", input: { path: "notes.txt" } }, options: null, allowText: false },
      ],
      [
        { kind: "connection", prompt: "Connect your calendar.", url: "https://calendar.example/connect?state=1" },
        { url: "https://calendar.example/connect?state=1", action: null, allowText: false },
      ],
      [{ kind: "connection", prompt: "Local connect", url: "http://127.0.0.1:9000/c", multiSelect: false, allowText: false }, { url: "http://127.0.0.1:9000/c" }],
      [
        { kind: "text", prompt: "Your name?", allowText: true, options: null },
        { options: null, allowText: true },
      ],
    ] as const;
    for (const [question, expected] of asked) {
      const reply = await runningTask(w, c.id, clock, `ask ${question.kind}`);
      const r = await agentCalls(c.id, reply.taskId!).result({ status: "success", content: question.prompt, question });
      expect(r.status, r.text).toBe(204);
      const q = await pendingOf(w, c.id);
      expect(q, question.prompt).toMatchObject({ kind: question.kind, prompt: question.prompt, status: "pending", taskId: reply.taskId, messageId: reply.id, ...expected });
      expect((await peek(w, c.id)).find((m) => m.id === reply.id)).toMatchObject({ status: "success", questionId: q!.id });
    }
  });

  it("refuses a result whose question is not valid with 400, storing nothing of it; the task still takes a valid result", async () => {
    const { clock, w, c } = await opened();
    const reply = await runningTask(w, c.id, clock);
    const options = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `o${i}` }));
    const invalid: [unknown, string][] = [
      [{ kind: "poll", prompt: "?" }, "an unknown kind"],
      [{ kind: "text" }, "no prompt"],
      [{ kind: "text", prompt: "" }, "an empty prompt"],
      [{ kind: "text", prompt: "p".repeat(4001) }, "a prompt over 4000 characters"],
      [{ kind: "text", prompt: "?", options: options(2) }, "options on a text question"],
      [{ kind: "text", prompt: "?", multiSelect: true }, "multiSelect on a text question"],
      [{ kind: "text", prompt: "?", allowText: false }, "a text question that takes no text"],
      [{ kind: "choice", prompt: "?" }, "a choice without options"],
      [{ kind: "choice", prompt: "?", options: [] }, "no options"],
      [{ kind: "choice", prompt: "?", options: options(21) }, "21 options"],
      [{ kind: "choice", prompt: "?", options: [{ id: "a", label: "A" }, { label: "B" }] }, "ids for some options only"],
      [
        {
          kind: "choice",
          prompt: "?",
          options: [
            { id: "a", label: "A" },
            { id: "a", label: "B" },
          ],
        },
        "repeated ids",
      ],
      [{ kind: "choice", prompt: "?", options: [{ id: "x".repeat(65), label: "A" }] }, "an id over 64 characters"],
      [{ kind: "choice", prompt: "?", options: [{ label: "" }] }, "an empty label"],
      [{ kind: "choice", prompt: "?", options: [{ label: "l".repeat(201) }] }, "a label over 200 characters"],
      [{ kind: "choice", prompt: "?", options: [{ label: "A", description: "d".repeat(1001) }] }, "a description over 1000 characters"],
      [{ kind: "choice", prompt: "?", options: options(2), url: "https://x.example" }, "a url on a choice"],
      [{ kind: "approval", prompt: "?" }, "an approval without its action"],
      [{ kind: "approval", prompt: "?", action: { name: "", summary: "s" } }, "an action without a name"],
      [{ kind: "approval", prompt: "?", action: { name: "n", summary: "s", input: "x" } }, "an action whose input is not an object"],
      [{ kind: "approval", prompt: "?", action: { name: "n", summary: "s", input: { big: "x".repeat(16_384) } } }, "an input over 16 KB"],
      [{ kind: "connection", prompt: "?" }, "a connection without its url"],
      [{ kind: "connection", prompt: "?", url: "http://calendar.example/c" }, "http: off loopback"],
      [{ kind: "connection", prompt: "?", url: "ftp://calendar.example/c" }, "another scheme"],
      [{ kind: "connection", prompt: "?", url: "not a url" }, "not a url"],
      ["Which one?", "a string"],
    ];
    for (const [question, what] of invalid) {
      const r = await agentCalls(c.id, reply.taskId!).result({ status: "success", content: "Asking", question });
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors.length, what).toBeGreaterThan(0);
    }
    expect((await peek(w, c.id)).find((m) => m.id === reply.id)).toMatchObject({ status: "working", questionId: null });
    expect(await chatOf(w, c.id)).toMatchObject({ isWorking: true, pendingQuestionId: null });
    const valid = await agentCalls(c.id, reply.taskId!).result({ status: "success", content: "Fine", question: { kind: "text", prompt: "Fine?" } });
    expect(valid.status).toBe(204);
    expect(await pendingOf(w, c.id)).toMatchObject({ kind: "text", prompt: "Fine?" });
  });

  it("fails the task when an immediate answer carries an invalid question: it is not a result", async () => {
    const clock = frozenClock();
    fakeAgent(() => Response.json({ status: "success", content: "Pick", question: { kind: "choice", prompt: "Pick", options: [] } }));
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "go");
    await settle(room(c.id), clock);
    const [error, reply] = await peek(w, c.id);
    expect(reply).toMatchObject({ role: "owner", status: "failed", questionId: null });
    expect(error!.content).toMatch(/not a result/);
    expect(await chatOf(w, c.id)).toMatchObject({ isAwaitingUser: false, pendingQuestionId: null });
  });

  it("asks a text question in the reply's words for awaitingUser alone; a question wins; a failed result asks nothing", async () => {
    const { clock, w, c } = await opened();
    const long = `${"é".repeat(4_000)}and more`;
    let reply = await runningTask(w, c.id, clock);
    await agentCalls(c.id, reply.taskId!).result({ status: "success", content: long, awaitingUser: true });
    expect(await pendingOf(w, c.id)).toMatchObject({ kind: "text", prompt: "é".repeat(4_000), allowText: true });

    reply = await runningTask(w, c.id, clock, "again");
    await agentCalls(c.id, reply.taskId!).result({ status: "success", content: "", awaitingUser: true });
    expect((await pendingOf(w, c.id))!.prompt).toBe(WAITING_PROMPT);

    reply = await runningTask(w, c.id, clock, "and again");
    await agentCalls(c.id, reply.taskId!).result({
      status: "success",
      content: "x",
      awaitingUser: true,
      question: { kind: "connection", prompt: "Connect", url: "https://c.example" },
    });
    expect(await pendingOf(w, c.id)).toMatchObject({ kind: "connection" });

    reply = await runningTask(w, c.id, clock, "fail now");
    await agentCalls(c.id, reply.taskId!).result({ status: "failed", content: "", question: { kind: "text", prompt: "Ignored?" } });
    expect(await pendingOf(w, c.id)).toBeNull();
  });
});

describe("the task start body's answer", () => {
  it("tells the agent what the task's message answered: an answer as sent, an ordinary send's text, and null otherwise", async () => {
    const { clock, agent, w, c } = await opened();
    const ask = async (content: string, question: unknown) => {
      const reply = await runningTask(w, c.id, clock, content);
      await agentCalls(c.id, reply.taskId!).result({ status: "success", content: "?", question });
      return (await pendingOf(w, c.id))!;
    };
    // The alarm that dispatches the next task: its start body, as the agent got it; the task then ends, leaving the chat idle.
    const nextStart = async () => {
      await runNextAlarm(room(c.id), clock);
      const start = agent.at(-1)!.body;
      expect((await agentCalls(c.id, start.taskId).result({ status: "success", content: "done" })).status).toBe(204);
      return start;
    };
    const choice = await ask("first", {
      kind: "choice",
      prompt: "?",
      options: [
        { id: "a", label: "A" },
        { id: "b", label: "B" },
      ],
      multiSelect: true,
      allowText: true,
    });
    expect(agent.at(-1)!.body.answer).toBeNull();
    const picked = await answer(w, c.id, choice.id, { optionIds: ["b", "a"], text: "both" });
    expect(picked.status).toBe(202);
    expect(await nextStart()).toMatchObject({ content: "A, B\nboth", answer: { questionId: choice.id, kind: "choice", optionIds: ["b", "a"], text: "both" } });

    const text = await ask("second", { kind: "text", prompt: "Name?" });
    await send(w, c.id, "Northwind");
    expect((await nextStart()).answer).toEqual({ questionId: text.id, kind: "text", text: "Northwind" });

    const approval = await ask("third", { kind: "approval", prompt: "OK?", action: { name: "n", summary: "s" } });
    const declined = await answer(w, c.id, approval.id, { decline: true, reason: "no" });
    expect(declined.status).toBe(202);
    expect((await nextStart()).answer).toEqual({ questionId: approval.id, kind: "approval", decline: true, reason: "no" });

    const connection = await ask("fourth", { kind: "connection", prompt: "Connect", url: "https://c.example" });
    await send(w, c.id, "no, do this instead");
    expect((await nextStart()).answer, "a send that superseded answers nothing").toBeNull();
    expect(await pendingOf(w, c.id)).toBeNull();
    expect((await call("GET", `${chatsPath(w)}/${c.id}/questions/${connection.id}`, { token: w.token })).json.status).toBe("superseded");
  });
});
