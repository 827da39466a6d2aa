import { firstCharacters } from "../text";
import { approvalQuestion, choiceQuestion, connectionQuestion, textQuestion, type AskedQuestion } from "./asked-question";
import type { AgentPort, AgentTask } from "./port";
import { ACTION_SUMMARY_MAX, LABEL_MAX, OPTIONS_MAX, PROMPT_MAX } from "./limits";

// The built-in agent writes its reply in this many parts, evenly over its working time.
export const LOCAL_REPLY_PARTS = 4;
// How much of a steering text the built-in agent's reply repeats, in code points.
const NOTED_MAX = 120;
// A /connect name in the prompt and the url, in code points.
const CONNECTION_NAME_MAX = 100;

/**
 * The built-in agent: works for delayMs, writing its deterministic reply part by part; it takes steering at
 * each part. A message that begins with a demo command asks a question when the reply ends (demoQuestion).
 */
export function localAgent(delayMs: number, appOrigin: string): AgentPort {
  const partAt = (startedAt: number, part: number) => startedAt + (delayMs * part) / LOCAL_REPLY_PARTS;
  return {
    async start(_task, now) {
      return { kind: "pending", checkAt: partAt(now, 1) };
    },
    check(task, { startedAt, now, written, takeSteering }) {
      const steering = takeSteering();
      const reply = localReply(task);
      if (now >= startedAt + delayMs) return { status: "success", content: reply + steering.map(noted).join(""), question: demoQuestion(task.content, appOrigin) };
      const due = Math.min(LOCAL_REPLY_PARTS - 1, Math.floor(((now - startedAt) * LOCAL_REPLY_PARTS) / delayMs));
      const soFar = replyParts(reply).slice(0, due).join("");
      return { checkAt: partAt(startedAt, due + 1), append: soFar.length > written ? soFar.slice(written) : undefined };
    },
    // Nothing to tell: once stopped, its task is never checked again.
    async stop() {},
  };
}

/** The built-in agent's reply: the prompt of the question a demo command asks, else what it worked on. */
export function localReply(task: Pick<AgentTask, "content">): string {
  const asked = demoQuestion(task.content, "");
  if (asked) return asked.prompt;
  const characters = [...task.content];
  const words = task.content.trim().split(/\s+/).filter(Boolean).length;
  const excerpt = characters.length > 120 ? `${characters.slice(0, 120).join("")}…` : task.content;
  return `Done. I worked on your request (${characters.length} characters, ${words} ${words === 1 ? "word" : "words"}): “${excerpt}”`;
}

const COMMAND = /^\/(ask|choose\+?|approve|connect)\s+([\s\S]*)$/;

/**
 * The question a message asks the built-in agent to ask, for demos and tests:
 * `/ask <prompt>`, `/choose <prompt> | <label> | …` (`/choose+`: several picks), `/approve <summary>`,
 * `/connect <name>`. Undefined for any other message, or a command with nothing after it.
 */
export function demoQuestion(content: string, appOrigin: string): AskedQuestion | undefined {
  const [, command, rest = ""] = COMMAND.exec(content) ?? [];
  const text = rest.trim();
  if (!command || !text) return undefined;
  switch (command) {
    case "ask":
      return textQuestion(text);
    case "choose":
    case "choose+": {
      const [prompt = "", ...labels] = text
        .split("|")
        .map((part) => part.trim())
        .filter(Boolean);
      if (labels.length === 0) return textQuestion(prompt);
      const options = labels.slice(0, OPTIONS_MAX).map((label) => ({ label: firstCharacters(label, LABEL_MAX) }));
      return choiceQuestion(firstCharacters(prompt, PROMPT_MAX), options, command === "choose+");
    }
    case "approve": {
      const summary = firstCharacters(text, ACTION_SUMMARY_MAX);
      return approvalQuestion(`May I: ${summary}?`, { name: "demo_action", summary, input: {} });
    }
    default: {
      const name = firstCharacters(text, CONNECTION_NAME_MAX);
      return connectionQuestion(`Connect ${name} to go on.`, `${appOrigin}/connections/${encodeURIComponent(name)}`);
    }
  }
}

/** How the built-in agent's reply acknowledges a steering text it took. */
export const noted = (text: string) => ` Noted: “${firstCharacters(text, NOTED_MAX)}”`;

/** The reply cut at word boundaries into LOCAL_REPLY_PARTS pieces that join back to it. */
export function replyParts(reply: string): string[] {
  const words = reply.split(/(?<=\s)/);
  const size = Math.ceil(words.length / LOCAL_REPLY_PARTS);
  return Array.from({ length: LOCAL_REPLY_PARTS }, (_, i) => words.slice(i * size, (i + 1) * size).join(""));
}
