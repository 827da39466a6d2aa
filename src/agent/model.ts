import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4Message,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { isAbortError, retryWithExponentialBackoff, safeParseJSON, zodSchema } from "@ai-sdk/provider-utils";
import { z } from "zod";
import { type AskedQuestion, modelQuestion } from "./asked-question";
import { conversation, type Turn } from "./conversation";
import type { AgentPort, AgentResult, AgentTask, LiveTask, TokenUsage } from "./port";
import { ReplyBatcher } from "./reply-batcher";
import { log, describeForLog } from "../log";
import { DESCRIPTION_MAX, LABEL_MAX, OPTIONS_MAX, PROMPT_MAX } from "./limits";

export type ModelAgentOptions = {
  /** A provider's chat model (the AI SDK's provider interface): one streamed call is all the agent asks of it. */
  model: LanguageModelV4;
  systemPrompt: string;
  /** Offer ask_user (off for servers that refuse `tools`). */
  tools: boolean;
  historyChars: number;
  /** Keeps the object running while a model call is in flight (the object's waitUntil). */
  keepAlive: (work: Promise<unknown>) => void;
  /** AGENT_MODE, for the logs. */
  mode: string;
};

// Provider 429 and 5xx (and connections that fail before the answer begins) are retried this often, 2 s then 4 s apart
// (or as the provider's Retry-After asks, up to a minute), within the task's deadline.
const MODEL_RETRIES = 2;
const FIRST_RETRY_DELAY_MS = 2_000;
const RETRY_AFTER_MAX_MS = 60_000;
// Between the parts of a reply that steering texts extended.
const STEERED_SEPARATOR = "\n\n";

// The schema the model is shown; what it sends is taken as far as it is a question (modelQuestion), so a call a little off still asks.
const ASK_USER_INPUT = zodSchema(
  z.object({
    question: z.string().min(1).max(PROMPT_MAX).describe("One clear question for the user"),
    options: z
      .array(z.object({ label: z.string().min(1).max(LABEL_MAX), description: z.string().max(DESCRIPTION_MAX).optional() }))
      .min(1)
      .max(OPTIONS_MAX)
      .optional()
      .describe("The choices, in the order to show them"),
    multiSelect: z.boolean().optional().describe("The user may pick more than one option"),
    allowText: z.boolean().optional().describe("The user may also answer in their own words"),
  }),
);
let askUser: Promise<LanguageModelV4FunctionTool> | undefined;
// Derived once, at the first call that offers it, not on every call (nor at startup, where most isolates never call a model).
const askUserTool = () =>
  (askUser ??= Promise.resolve(ASK_USER_INPUT.jsonSchema).then((inputSchema) => ({
    type: "function",
    name: "ask_user",
    description:
      "Ask the user a question when you cannot go on without their choice or information; give options when the answer is one (multiSelect: some) of a few. " +
      "It ends your turn; the answer comes as the user's next message.",
    inputSchema,
  })));

/** Why a model task failed, in the service's own words: a provider's text can echo the key it was given. */
function failureOf(error: unknown): { message: string; status: number | undefined } {
  const last = (error as { lastError?: unknown })?.lastError ?? error;
  const status = (last as { statusCode?: unknown })?.statusCode;
  const code = typeof status === "number" ? status : undefined;
  if (code === 401 || code === 403) return { message: "The model provider refused the service's credentials.", status: code };
  if (code === 404) return { message: "The model provider does not know the configured model.", status: code };
  if (code === 429) return { message: "The model provider is limiting requests; try again later.", status: code };
  if (code !== undefined && code >= 500) return { message: "The model provider failed to answer.", status: code };
  if (code !== undefined && code >= 400) return { message: "The model provider refused the request.", status: code };
  if (code !== undefined) return { message: "The model stopped answering.", status: code };
  return { message: "The model could not be reached.", status: undefined };
}

/** Failed, with the reason; what was written stays in the reply, and the chat returns the credits. */
const failed = (error: string): AgentResult => ({ status: "failed", error });

/**
 * An agent that is a language model (AGENT_MODE openai or workers-ai, through the AI SDK's provider for each). A task
 * runs in the chat's object, in memory: the reply streams into the chat in batches, steering texts
 * the chat hands over become user messages before the next call, `ask_user` ends the task with its
 * question, and a stop aborts the request. A task whose object restarted has lost its call: the
 * chat finds no run for it and fails it at once.
 */
export function modelAgent(options: ModelAgentOptions): AgentPort {
  const runs = new Map<string, AbortController>();
  // Tasks whose run ended but whose end could not be recorded: their check fails them, saying so.
  const unrecorded = new Set<string>();

  async function run(task: AgentTask, live: LiveTask, stopped: AbortSignal): Promise<void> {
    // The reply is full (or the task ended): the call is cut short and what was written stands.
    const cut = new AbortController();
    const signal = AbortSignal.any([stopped, cut.signal]);
    const batcher = new ReplyBatcher((text) => {
      if (!live.append(text)) cut.abort();
    });
    const messages: LanguageModelV4Message[] = conversation(live.earlierTurns(), live.prompt(), options.historyChars).map(toModel);
    // Steering sent while the task was being dispatched goes with the first call.
    messages.push(...userTurns(live.takeSteering()));
    let result: AgentResult;
    try {
      result = await writeReply(messages, live, batcher, signal);
    } catch (error) {
      batcher.discard();
      if (stopped.aborted) return;
      if (cut.signal.aborted) {
        result = { status: "success", content: live.reply() };
      } else {
        const { message, status } = failureOf(error);
        const name = String((error as Error)?.name);
        // A provider's error: its status and name only, as its text may carry the key. Anything else is ours, logged whole.
        const detail = name.startsWith("AI_") ? { status, error: name } : { error: describeForLog(error) };
        log.warn("model_call_failed", { mode: options.mode, taskId: task.taskId, ...detail });
        result = failed(message);
      }
    }
    if (!stopped.aborted) await live.finish(result);
  }

  /** The model's calls for one task: the first, then one more for each batch of steering texts taken after a call. */
  async function writeReply(messages: LanguageModelV4Message[], live: LiveTask, batcher: ReplyBatcher, signal: AbortSignal): Promise<AgentResult> {
    for (let written = 0; ; ) {
      // A call that answers steering continues the reply after a blank line.
      let separator = written > 0 ? STEERED_SEPARATOR : "";
      const call = await callModel(messages, signal, live, (text) => {
        batcher.add(separator + text);
        separator = "";
      });
      batcher.flush();
      if (signal.aborted) return { status: "success", content: live.reply() };
      if (call.question !== undefined) {
        const reply = live.reply();
        const prompt = call.question.prompt;
        return { status: "success", content: reply ? `${reply}${STEERED_SEPARATOR}${prompt}` : prompt, question: call.question };
      }
      written += call.text.length;
      // Steering the chat received while the model wrote: the model answers it in a call of its own.
      const steering = live.takeSteering();
      if (steering.length === 0) break;
      if (call.text) messages.push(assistantTurn(call.text));
      messages.push(...userTurns(steering));
    }
    return live.reply() ? { status: "success", content: live.reply() } : failed("The model sent no reply.");
  }

  /** One streamed completion: its text goes to onText as it comes, its token counts to the task; a call of ask_user gives the question. */
  async function callModel(
    messages: LanguageModelV4Message[],
    signal: AbortSignal,
    live: LiveTask,
    onText: (text: string) => void,
  ): Promise<{ text: string; question?: AskedQuestion }> {
    const tools = options.tools ? [await askUserTool()] : undefined;
    const retried = retryWithExponentialBackoff({
      maxRetries: MODEL_RETRIES,
      initialDelayInMs: FIRST_RETRY_DELAY_MS,
      abortSignal: signal,
      shouldRetry: (error) => APICallError.isInstance(error) && error.isRetryable,
      getDelayInMs: ({ error, exponentialBackoffDelay }) => retryAfterMs(error) ?? exponentialBackoffDelay,
      createRetryError: ({ message, errors }) => Object.assign(new Error(message), { name: "AI_RetryError", lastError: errors.at(-1) }),
    });
    const { stream } = await retried(() =>
      options.model.doStream({
        prompt: [{ role: "system", content: options.systemPrompt }, ...messages],
        tools,
        toolChoice: tools ? { type: "auto" } : undefined,
        abortSignal: signal,
      }),
    );
    let text = "";
    let question: AskedQuestion | undefined;
    try {
      for await (const part of stream as AsyncIterable<LanguageModelV4StreamPart>) {
        if (part.type === "text-delta") {
          text += part.delta;
          onText(part.delta);
        } else if (part.type === "tool-call" && part.toolName === "ask_user") {
          // A question that is not one (empty, not text, not JSON) is no question: the reply is what was written.
          const input = await safeParseJSON({ text: part.input });
          question = modelQuestion(input.success ? input.value : undefined) ?? question;
        } else if (part.type === "finish") {
          // A call that ended reports its counts here; one cut short reports none.
          const usage = reportedUsage(part.usage);
          if (usage) live.addUsage(usage);
        } else if (part.type === "error") {
          throw part.error;
        }
      }
    } catch (error) {
      // Stopped or cut short: what was written stands, as when the call ends.
      if (!(signal.aborted && isAbortError(error))) throw error;
    }
    return { text, question };
  }

  function stopRun(taskId: string): void {
    runs.get(taskId)?.abort();
    runs.delete(taskId);
  }

  return {
    live: true,
    async start(task, _now, live) {
      if (!live) throw new Error("a model task needs the chat to run it");
      const abort = new AbortController();
      runs.set(task.taskId, abort);
      const running = run(task, live, abort.signal).catch((error) => {
        // Recording the end failed (storage): the chat fails the task at its deadline.
        log.error("model_task_unrecorded", { taskId: task.taskId }, error);
        unrecorded.add(task.taskId);
      });
      options.keepAlive(running.finally(() => runs.get(task.taskId) === abort && runs.delete(task.taskId)));
      // Nothing to look at before the deadline while the call runs: it reports through `live` itself.
      return { kind: "pending", checkAt: Number.POSITIVE_INFINITY };
    },
    check(task) {
      // The call lives in this object's memory: none here means the object restarted while it ran.
      if (runs.has(task.taskId)) return { checkAt: Number.POSITIVE_INFINITY };
      if (unrecorded.delete(task.taskId)) return failed("The agent's reply could not be recorded.");
      return failed("The model's reply was cut off when the service restarted.");
    },
    async stop(task) {
      stopRun(task.taskId);
    },
    abandon(task) {
      stopRun(task.taskId);
    },
  };
}

/** The model's own counts, or undefined when the provider reported neither. */
function reportedUsage(usage: LanguageModelV4Usage | undefined): TokenUsage | undefined {
  const inputTokens = usage?.inputTokens.total;
  const outputTokens = usage?.outputTokens.total;
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 };
}

/** How long a provider's 429 or 503 asked to wait (Retry-After-Ms, else Retry-After in seconds or as a date), when that is under a minute. */
function retryAfterMs(error: unknown): number | undefined {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  const inMs = headers?.["retry-after-ms"];
  const after = headers?.["retry-after"];
  let ms = Number.NaN;
  if (inMs) ms = Number.parseFloat(inMs);
  else if (after) ms = Number.isNaN(Number.parseFloat(after)) ? Date.parse(after) - Date.now() : Number.parseFloat(after) * 1000;
  return ms >= 0 && ms < RETRY_AFTER_MAX_MS ? ms : undefined;
}

const assistantTurn = (text: string): LanguageModelV4Message => ({ role: "assistant", content: [{ type: "text", text }] });
const userTurns = (texts: string[]): LanguageModelV4Message[] => texts.map((text) => ({ role: "user", content: [{ type: "text", text }] }));
const toModel = (turn: Turn): LanguageModelV4Message => (turn.role === "user" ? userTurns([turn.content])[0]! : assistantTurn(turn.content));
