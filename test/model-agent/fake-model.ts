import { vi } from "vitest";
import { unplannedHost } from "../network";

/** One request the chat made to the model: what it sent, and what became of the answer's stream. */
export type ModelCall = { authorization: string | null; body: any; aborted: boolean; finished: boolean };

/**
 * How the stand-in answers one request: `parts` of text, `gapMs` apart (the first at once, or after
 * `firstTokenMs`), then, if
 * `ask`, a call of ask_user with that question (or those arguments), and the end of the completion. The stream is made and
 * written in the chat object's own context (a test may not touch another object's I/O): the test
 * scripts it and reads what happened from the ModelCall.
 */
export type Script = { parts: string[]; gapMs?: number; ask?: string | AskUser; firstTokenMs?: number; usage?: Usage | null };
/** ask_user's arguments as a model may send them. */
type AskUser = { question: string; options?: { label: string; description?: string }[]; multiSelect?: boolean; allowText?: boolean };
type Usage = { prompt_tokens: number; completion_tokens: number };

/** What the stand-in reports, as OpenAI's server does, when a request asks with stream_options.include_usage (a script's `usage: null` reports none). */
export const DEFAULT_USAGE: Usage = { prompt_tokens: 321, completion_tokens: 54 };

const encoder = new TextEncoder();
const sse = (data: unknown) => encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
const chunk = (delta: unknown, finish: string | null = null) =>
  sse({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });

function frames(script: Script, askedForUsage: boolean): Uint8Array[] {
  const out = [chunk({ role: "assistant", content: "" }), ...script.parts.map((text) => chunk({ content: text }))];
  if (script.ask !== undefined) {
    out.push(chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "ask_user", arguments: "" } }] }));
    const args = typeof script.ask === "string" ? { question: script.ask } : script.ask;
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }));
  }
  out.push(chunk({}, script.ask !== undefined ? "tool_calls" : "stop"));
  const usage = script.usage === undefined ? DEFAULT_USAGE : script.usage;
  if (askedForUsage && usage)
    out.push(
      sse({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
    );
  out.push(sse("[DONE]"));
  return out;
}

/**
 * Replaces the model server (https://model.test/v1, the test project's AGENT_BASE_URL) with a
 * stand-in: `answer` gets each request and returns a Script to stream or a Response (an error).
 */
export function fakeModel(answer: (call: ModelCall, index: number) => Script | Response) {
  const calls: ModelCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://model.test/")) return unplannedHost(request);
    const call: ModelCall = { authorization: request.headers.get("authorization"), body: await request.json(), aborted: false, finished: false };
    const index = calls.push(call) - 1;
    const script = answer(call, index);
    if (script instanceof Response) {
      call.finished = true;
      return script;
    }
    const pending = frames(script, call.body?.stream_options?.include_usage === true);
    let sent = 0;
    const gone = () => {
      if (!call.finished) call.aborted = true;
    };
    request.signal.addEventListener("abort", gone);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // The role chunk and the first part at once, the others gapMs apart.
        const wait = sent === 1 ? script.firstTokenMs : sent > 1 ? script.gapMs : undefined;
        if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
        if (call.aborted) return;
        controller.enqueue(pending[sent++]!);
        if (sent === pending.length) {
          call.finished = true;
          controller.close();
        }
      },
      cancel: gone,
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    calls,
    /** Waits until the chat has made its nth request (from 1). */
    async made(n: number, timeoutMs = 5_000): Promise<ModelCall> {
      for (let waited = 0; calls.length < n; waited += 10) {
        if (waited > timeoutMs) throw new Error(`the model was asked ${calls.length} times, not ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return calls[n - 1]!;
    },
  };
}

/** A stand-in that answers every request with the same script. */
export const replying = (script: Script) => () => script;
