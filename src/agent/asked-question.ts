import { z } from "zod";
import { characters, firstCharacters } from "../text";
import { ACTION_INPUT_MAX_BYTES, ACTION_NAME_MAX, ACTION_SUMMARY_MAX, DESCRIPTION_MAX, LABEL_MAX, OPTION_ID_MAX, OPTIONS_MAX, PROMPT_MAX, URL_MAX } from "./limits";
import type { QuestionAction, QuestionKind, QuestionOption } from "./question-shapes";

/** What an agent asks, as the chat records it: every field of the Question that the agent decides, each kind's others null or false. */
export type AskedQuestion = {
  kind: QuestionKind;
  prompt: string;
  options: QuestionOption[] | null;
  multiSelect: boolean;
  allowText: boolean;
  action: QuestionAction | null;
  url: string | null;
};
type OptionInput = { id?: string; label: string; description?: string | null };

// The prompt of an agent that says it waits but wrote nothing to ask with.
export const WAITING_PROMPT = "The agent is waiting for your answer.";
const NONE = { options: null, multiSelect: false, allowText: false, action: null, url: null };

/** A free answer; an agent that only says it waits asks this with its reply's first PROMPT_MAX characters. */
export const textQuestion = (prompt: string): AskedQuestion => ({ kind: "text", prompt: firstCharacters(prompt, PROMPT_MAX) || WAITING_PROMPT, ...NONE, allowText: true });

/** A choice: option ids as given, or 1, 2, … in order when none is; descriptions null when absent. */
export const choiceQuestion = (prompt: string, options: OptionInput[], multiSelect = false, allowText = false): AskedQuestion => ({
  kind: "choice",
  prompt,
  ...NONE,
  options: options.map((o, i) => ({ id: o.id ?? String(i + 1), label: o.label, description: o.description ?? null })),
  multiSelect,
  allowText,
});

export const approvalQuestion = (prompt: string, action: QuestionAction): AskedQuestion => ({ kind: "approval", prompt, ...NONE, action });
export const connectionQuestion = (prompt: string, url: string): AskedQuestion => ({ kind: "connection", prompt, ...NONE, url });

/** What a task's end asks: only a reply that succeeds asks; an agent that only says it waits asks in its reply's words. */
export const askedBy = (end: { status: string; question?: AskedQuestion; awaitingUser?: boolean }, reply: string): AskedQuestion | undefined =>
  end.status !== "success" ? undefined : (end.question ?? (end.awaitingUser ? textQuestion(reply) : undefined));

/** Whether an answer in words fits it: a text question, or a choice that allows text. */
export const takesText = (question: Pick<AskedQuestion, "kind" | "allowText">) => question.kind === "text" || (question.kind === "choice" && question.allowText);

// ---- the http agent's `question` (docs/agent-protocol.md): validated whole, since it is the agent's to get right ----
const utf8 = new TextEncoder();
const urlOf = (value: string): URL | undefined => {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
};
const isLoopback = (host: string) => host === "localhost" || host === "127.0.0.1" || host === "[::1]";
const ConnectionUrl = z
  .string()
  .max(URL_MAX)
  .refine((value) => {
    const url = urlOf(value);
    return url !== undefined && (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname)));
  }, "an https: URL, or http: on localhost, 127.0.0.1 or [::1]");
const Action = z.object({
  name: characters(1, ACTION_NAME_MAX, "name"),
  summary: characters(1, ACTION_SUMMARY_MAX, "summary"),
  input: z
    .record(z.string(), z.unknown())
    .default({})
    .refine((input) => utf8.encode(JSON.stringify(input)).byteLength <= ACTION_INPUT_MAX_BYTES, `at most ${ACTION_INPUT_MAX_BYTES} bytes of JSON`),
});
const AgentOption = z.object({
  id: z.string().min(1).max(OPTION_ID_MAX).optional(),
  label: characters(1, LABEL_MAX, "label"),
  description: characters(0, DESCRIPTION_MAX, "description").nullish(),
});
// A field of another kind may be left out, or sent empty (null, false).
const none = z.null().optional();
const no = z.literal(false).optional();
const prompt = characters(1, PROMPT_MAX, "prompt");

export const AgentQuestion = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("text"), prompt, options: none, multiSelect: no, allowText: z.literal(true).optional(), action: none, url: none }),
    z.object({
      kind: z.literal("choice"),
      prompt,
      options: z
        .array(AgentOption)
        .min(1)
        .max(OPTIONS_MAX)
        .superRefine((options, ctx) => {
          const given = options.filter((o) => o.id !== undefined).length;
          if (given !== 0 && given !== options.length) ctx.addIssue({ code: "custom", message: "give an id for every option or for none" });
          else if (new Set(options.map((o) => o.id)).size !== options.length && given > 0) ctx.addIssue({ code: "custom", message: "option ids must be unique" });
        }),
      multiSelect: z.boolean().optional(),
      allowText: z.boolean().optional(),
      action: none,
      url: none,
    }),
    z.object({ kind: z.literal("approval"), prompt, options: none, multiSelect: no, allowText: no, action: Action, url: none }),
    z.object({ kind: z.literal("connection"), prompt, options: none, multiSelect: no, allowText: no, action: none, url: ConnectionUrl }),
  ])
  .transform((q): AskedQuestion => {
    switch (q.kind) {
      case "text":
        return textQuestion(q.prompt);
      case "choice":
        return choiceQuestion(q.prompt, q.options, q.multiSelect, q.allowText);
      case "approval":
        return approvalQuestion(q.prompt, q.action);
      case "connection":
        return connectionQuestion(q.prompt, q.url);
    }
  });

// ---- a model's ask_user: taken as far as it is a question, since a model is not an API client ----
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** What a model's ask_user call asks: a choice when it gives options (the first OPTIONS_MAX with a label), else text; undefined when it asks nothing. */
export function modelQuestion(input: unknown): AskedQuestion | undefined {
  let args = input;
  if (typeof input === "string") {
    try {
      args = JSON.parse(input);
    } catch {
      return undefined;
    }
  }
  const asked = record(args);
  const question = asked?.question;
  if (typeof question !== "string" || !question.trim()) return undefined;
  const text = firstCharacters(question, PROMPT_MAX);
  const options = (Array.isArray(asked!.options) ? asked!.options : [])
    .map(record)
    .filter((o) => typeof o?.label === "string" && o.label.trim() !== "")
    .slice(0, OPTIONS_MAX)
    .map((o) => ({
      label: firstCharacters(o!.label as string, LABEL_MAX),
      description: typeof o!.description === "string" ? firstCharacters(o!.description, DESCRIPTION_MAX) : null,
    }));
  if (options.length === 0) return textQuestion(text);
  return choiceQuestion(text, options, asked!.multiSelect === true, asked!.allowText === true);
}
