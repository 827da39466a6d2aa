import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterEach, describe, expect, it, vi } from "vitest";
import { config, DEFAULT_SYSTEM_PROMPT } from "../../src/config";
import { conversation, withQuote, type Turn } from "../../src/agent/conversation";
import { modelAgent } from "../../src/agent/model";
import type { AgentResult, AgentTask, LiveTask, TokenUsage } from "../../src/agent/port";
import { REPLY_FLUSH_MS, ReplyBatcher } from "../../src/agent/reply-batcher";
import { agentFor } from "../../src/agent/select";
import type { Env } from "../../src/env";

afterEach(() => vi.useRealTimers());

const task: AgentTask = { taskId: "t1", chatId: "c", projectId: "p", content: "hi", replyToMessageId: null, callbackUrl: null, steeringUrl: null, answer: null };
const turn = (role: Turn["role"], content: string): Turn => ({ role, content });

describe("what the model is given", () => {
  it("the newest earlier turns that fit the budget, oldest first, and the message it answers last, whatever its length", () => {
    const newestFirst = [turn("assistant", "a3"), turn("user", "u3"), turn("assistant", ""), turn("user", "u2"), turn("user", "u1")];
    expect(conversation(newestFirst, "now", 100)).toEqual([turn("user", "u1"), turn("user", "u2"), turn("user", "u3"), turn("assistant", "a3"), turn("user", "now")]);
    expect(conversation(newestFirst, "now", 6)).toEqual([turn("assistant", "a3"), turn("user", "now")]);
    expect(conversation(newestFirst, "x".repeat(500), 100)).toEqual([turn("user", "x".repeat(500))]);
  });

  it("reads the earlier turns only as far back as the budget reaches", () => {
    let read = 0;
    function* turns() {
      for (let i = 0; i < 10_000; i++) {
        read++;
        yield turn("user", "0123456789");
      }
    }
    expect(conversation(turns(), "q", 100)).toHaveLength(10);
    expect(read).toBe(10);
  });

  it("quotes the message a reply answers, cut short", () => {
    expect(withQuote("yes", "line one\nline two")).toBe("In reply to this earlier message:\n> line one\n> line two\n\nyes");
    expect(withQuote("yes", undefined)).toBe("yes");
    expect(withQuote("yes", "q".repeat(5_000)).length).toBeLessThan(2_100);
  });
});

describe("a streamed reply's batches", () => {
  it("hands on the first piece at once and then at most one batch every 250 ms", () => {
    vi.useFakeTimers();
    let now = 0;
    const written: string[] = [];
    const batcher = new ReplyBatcher(
      (text) => written.push(text),
      () => now,
    );
    batcher.add("a");
    expect(written).toEqual(["a"]);
    for (let i = 0; i < 1_000; i++) batcher.add("b");
    expect(written).toHaveLength(1);
    now = REPLY_FLUSH_MS;
    vi.advanceTimersByTime(REPLY_FLUSH_MS);
    expect(written).toEqual(["a", "b".repeat(1_000)]);
    batcher.add("c");
    batcher.flush();
    expect(written.at(-1)).toBe("c");
    batcher.add("d");
    batcher.discard();
    vi.advanceTimersByTime(REPLY_FLUSH_MS);
    expect(written.join("")).not.toContain("d");
  });
});

/** A chat as the model agent sees it, in memory. */
function liveChat(steering: string[][] = []) {
  let reply = "";
  const usage: TokenUsage[] = [];
  const finished = Promise.withResolvers<AgentResult>();
  const live: LiveTask = {
    earlierTurns: () => [],
    prompt: () => "hi",
    reply: () => reply,
    append: (text) => {
      reply += text;
      return true;
    },
    takeSteering: () => steering.shift() ?? [],
    addUsage: (counts) => void usage.push(counts),
    finish: async (result) => finished.resolve(result),
  };
  return { live, finished: finished.promise, reply: () => reply, usage };
}

/** An OpenAI-compatible server's streamed completion of these text pieces. */
function completion(pieces: string[]): Response {
  const lines = pieces.map(
    (content) =>
      `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`,
  );
  lines.push(
    `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
  );
  return new Response(lines.join(""), { headers: { "content-type": "text/event-stream" } });
}

/** An OpenAI-compatible server answering every request with these text pieces; the requests it got. */
function server(pieces: string[]) {
  const requests: any[] = [];
  const fetch = async (_input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(JSON.parse(String(init?.body)));
    return completion(pieces);
  };
  return { requests, model: createOpenAICompatible({ name: "test", baseURL: "https://model.test/v1", fetch }).chatModel("m") };
}

const agentOn = (model: ReturnType<typeof server>["model"], tools = true) =>
  modelAgent({ model, systemPrompt: "sys", tools, historyChars: 1_000, keepAlive: () => {}, mode: "openai" });

describe("the model agent", () => {
  it("offers no tools when AGENT_TOOLS is off (servers that refuse them)", async () => {
    const { requests, model } = server(["fine"]);
    const chat = liveChat();
    await agentOn(model, false).start(task, 0, chat.live);
    expect(await chat.finished).toEqual({ status: "success", content: "fine" });
    expect(requests[0].tools).toBeUndefined();
    expect(config({ AGENT_MODE: "openai", AGENT_TOOLS: "off" } as Env).agent).toMatchObject({ tools: false });
    expect(config({ AGENT_MODE: "openai" } as Env).agent).toMatchObject({ tools: true, systemPrompt: DEFAULT_SYSTEM_PROMPT, historyChars: 24_000 });
  });

  it("gives steering texts waiting at the start with the first call, then one more call per batch taken after a call", async () => {
    const { requests, model } = server(["part"]);
    const chat = liveChat([["early"], ["one", "two"], []]);
    await agentOn(model).start(task, 0, chat.live);
    expect(await chat.finished).toMatchObject({ status: "success" });
    expect(requests).toHaveLength(2);
    expect(requests[0].messages.slice(-2).map((m: { content: string }) => m.content)).toEqual(["hi", "early"]);
    expect(requests[1].messages.slice(-3).map((m: { content: string }) => m.content)).toEqual(["part", "one", "two"]);
    expect(chat.reply()).toBe("part\n\npart");
  });

  it("keeps what was written when a later call fails, and fails the task in its own words", async () => {
    let calls = 0;
    const fetch = async () =>
      calls++ === 0
        ? new Response(
            `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "first part" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
            {
              headers: { "content-type": "text/event-stream" },
            },
          )
        : Response.json({ error: { message: "bad request, key sk-secret" } }, { status: 400 });
    const model = createOpenAICompatible({ name: "test", baseURL: "https://model.test/v1", fetch }).chatModel("m");
    const chat = liveChat([[], ["more please"]]);
    await agentOn(model).start(task, 0, chat.live);
    // No content: what was written ("first part") stays in the reply.
    expect(await chat.finished).toEqual({ status: "failed", error: "The model provider refused the request." });
    expect(chat.reply()).toBe("first part");
  });

  it("retries a provider's 503 and 500 as its Retry-After-Ms asks, twice at most, then fails in its own words; a 400 it does not retry", async () => {
    const answers: Response[] = [];
    let calls = 0;
    const model = createOpenAICompatible({
      name: "test",
      baseURL: "https://model.test/v1",
      fetch: async () => {
        calls++;
        return answers.shift()!;
      },
    }).chatModel("m");
    const failing = (status: number) => Response.json({ error: { message: "down, key sk-secret" } }, { status, headers: { "retry-after-ms": "1" } });
    answers.push(failing(503), completion(["after all"]));
    let chat = liveChat();
    await agentOn(model).start(task, 0, chat.live);
    expect(await chat.finished).toEqual({ status: "success", content: "after all" });
    expect(calls).toBe(2);

    [calls, chat] = [0, liveChat()];
    answers.push(failing(500), failing(500), failing(500), failing(500));
    await agentOn(model).start(task, 0, chat.live);
    expect(await chat.finished).toEqual({ status: "failed", error: "The model provider failed to answer." });
    expect(calls).toBe(3);

    [calls, chat] = [0, liveChat()];
    answers.length = 0;
    answers.push(failing(400), failing(400));
    await agentOn(model).start(task, 0, chat.live);
    expect(await chat.finished).toEqual({ status: "failed", error: "The model provider refused the request." });
    expect(calls).toBe(1);
  });

  it("takes an ask_user question only as far as it is one: its prompt cut to 4,000 characters, its options when they have labels", async () => {
    const asking = (args: string) => {
      const chunk = (delta: unknown, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const body = [
        chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "ask_user", arguments: args } }] }),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ].join("");
      return createOpenAICompatible({
        name: "test",
        baseURL: "https://model.test/v1",
        fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
      }).chatModel("m");
    };
    for (const args of [JSON.stringify({ question: "" }), JSON.stringify({ question: 5 }), "not json"]) {
      const chat = liveChat();
      await agentOn(asking(args)).start(task, 0, chat.live);
      expect(await chat.finished, args).toEqual({ status: "failed", error: "The model sent no reply." });
    }
    const asked = async (args: unknown) => {
      const chat = liveChat();
      await agentOn(asking(JSON.stringify(args))).start(task, 0, chat.live);
      return chat.finished;
    };
    const text = { kind: "text", options: null, multiSelect: false, allowText: true, action: null, url: null };
    expect(await asked({ question: "q".repeat(5_000) })).toEqual({ status: "success", content: "q".repeat(4_000), question: { ...text, prompt: "q".repeat(4_000) } });
    // Options without a label are no options; with none left it asks for text.
    expect(await asked({ question: "Which?", options: [{ label: "" }, { description: "no label" }, 7] })).toMatchObject({ question: { ...text, prompt: "Which?" } });
    const many = Array.from({ length: 25 }, (_, i) => ({ label: i === 0 ? "l".repeat(300) : `o${i}`, description: i === 1 ? "d".repeat(1_200) : undefined }));
    const choice = (await asked({ question: "Pick", options: many, multiSelect: true, allowText: "yes" })) as {
      question: { options: { id: string; label: string; description: string | null }[] };
    };
    expect(choice.question).toMatchObject({ kind: "choice", prompt: "Pick", multiSelect: true, allowText: false });
    expect(choice.question.options).toHaveLength(20);
    expect(choice.question.options.slice(0, 3)).toEqual([
      { id: "1", label: "l".repeat(200), description: null },
      { id: "2", label: "o1", description: "d".repeat(1_000) },
      { id: "3", label: "o2", description: null },
    ]);
  });

  it("finds no call for a task after a restart, and fails it", () => {
    const { model } = server([]);
    expect(agentOn(model).check(task, { startedAt: 0, now: 1, written: 0, takeSteering: () => [] })).toEqual({
      status: "failed",
      error: "The model's reply was cut off when the service restarted.",
    });
  });
});

describe("agent configuration, the model modes", () => {
  const host = { ai: undefined, keepAlive: () => {} };
  const start = (vars: Partial<Env>) => agentFor(config(vars as Env), host).start(task, 0);

  it("fails every task, saying what is missing or wrong, rather than running another agent", async () => {
    await expect(start({ AGENT_MODE: "openai", AGENT_MODEL: "m" })).rejects.toThrow("AGENT_MODE is openai but AGENT_BASE_URL is not set");
    await expect(start({ AGENT_MODE: "openai", AGENT_BASE_URL: "https://x.test/v1" })).rejects.toThrow("AGENT_MODE is openai but AGENT_MODEL is not set");
    await expect(start({ AGENT_MODE: "workers-ai", AGENT_MODEL: "@cf/m" })).rejects.toThrow("AGENT_MODE is workers-ai but the AI binding is not set");
    await expect(start({ AGENT_MODE: "openAI" })).rejects.toThrow('AGENT_MODE "openAI" is not one of local, http, openai, workers-ai');
    expect(agentFor(config({ AGENT_MODE: "" } as Env), host).live).toBeUndefined();
  });

  it("asks an OpenAI-compatible server for streamed usage unless AGENT_USAGE is off", async () => {
    const bodies: any[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      const end = { id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] };
      return new Response(`data: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } });
    });
    for (const usage of [undefined, "on", "off", " OFF "]) {
      const vars = { AGENT_MODE: "openai", AGENT_BASE_URL: "https://model.test/v1", AGENT_MODEL: "m", AGENT_USAGE: usage } as Env;
      const chat = liveChat();
      await agentFor(config(vars), host).start(task, 0, chat.live);
      await chat.finished;
    }
    expect(bodies.map((b) => b.stream_options ?? null)).toEqual([{ include_usage: true }, { include_usage: true }, null, null]);
    vi.restoreAllMocks();
  });
});

describe("the workers-ai mode, on a fake AI binding (the real one needs Cloudflare)", () => {
  /** Answers run() as Workers AI streams: server-sent events of { response } pieces, then [DONE]. */
  function fakeAi(pieces: string[], options: { hold?: boolean; usage?: { prompt_tokens: number; completion_tokens: number } } = {}) {
    const runs: { model: string; inputs: any; signal?: AbortSignal }[] = [];
    const ai = {
      run: async (model: string, inputs: unknown, runOptions?: { signal?: AbortSignal }) => {
        runs.push({ model, inputs, signal: runOptions?.signal });
        const frames = pieces.map((response) => `data: ${JSON.stringify({ response })}\n\n`);
        if (options.usage) frames.push(`data: ${JSON.stringify({ response: "", usage: options.usage })}\n\n`);
        if (!options.hold) frames.push("data: [DONE]\n\n");
        const encoder = new TextEncoder();
        return new ReadableStream<Uint8Array>({
          start(controller) {
            for (const frame of frames) controller.enqueue(encoder.encode(frame));
            if (!options.hold) controller.close();
          },
        });
      },
    } as unknown as Ai;
    return { ai, runs };
  }
  const workersAi = (ai: Ai) => agentFor(config({ AGENT_MODE: "workers-ai", AGENT_MODEL: "@cf/test/model", AGENT_SYSTEM_PROMPT: "sys" } as Env), { ai, keepAlive: () => {} });

  it("reports the token counts the binding gives", async () => {
    const { ai } = fakeAi(["Hi."], { usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const chat = liveChat();
    await workersAi(ai).start(task, 0, chat.live);
    await chat.finished;
    expect(chat.usage).toEqual([{ inputTokens: 12, outputTokens: 3 }]);
  });

  it("streams the model's reply into the chat, with the system prompt first and the message last", async () => {
    const { ai, runs } = fakeAi(["Hello ", "from Workers AI."]);
    const chat = liveChat();
    await workersAi(ai).start(task, 0, chat.live);
    expect(await chat.finished).toEqual({ status: "success", content: "Hello from Workers AI." });
    expect(runs[0]!.model).toBe("@cf/test/model");
    expect(runs[0]!.inputs.messages[0]).toMatchObject({ role: "system", content: "sys" });
    expect(runs[0]!.inputs.messages.at(-1)).toMatchObject({ role: "user", content: "hi" });
    expect(JSON.stringify(runs[0]!.inputs.tools)).toContain("ask_user");
  });

  it("aborts the binding's run when the task is stopped, and writes nothing more", async () => {
    const { ai, runs } = fakeAi(["Once "], { hold: true });
    const chat = liveChat();
    const agent = workersAi(ai);
    await agent.start(task, 0, chat.live);
    await vi.waitFor(() => expect(chat.reply()).toBe("Once "));
    await agent.stop(task);
    expect(runs[0]!.signal?.aborted).toBe(true);
  });
});
