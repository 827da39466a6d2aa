import { firstCharacters } from "../text";
import type { AgentPort, AgentTask } from "./port";

// The built-in agent writes its reply in this many parts, evenly over its working time.
export const LOCAL_REPLY_PARTS = 4;
// How much of a steering text the built-in agent's reply repeats, in code points.
const NOTED_MAX = 120;

/** The built-in agent: works for delayMs, writing its deterministic reply part by part; it takes steering at each part. */
export function localAgent(delayMs: number): AgentPort {
  const partAt = (startedAt: number, part: number) => startedAt + (delayMs * part) / LOCAL_REPLY_PARTS;
  return {
    async start(_task, now) {
      return { kind: "pending", checkAt: partAt(now, 1) };
    },
    check(task, { startedAt, now, written, takeSteering }) {
      const steering = takeSteering();
      const reply = localReply(task);
      if (now >= startedAt + delayMs) return { status: "success", content: reply + steering.map(noted).join("") };
      const due = Math.min(LOCAL_REPLY_PARTS - 1, Math.floor(((now - startedAt) * LOCAL_REPLY_PARTS) / delayMs));
      const soFar = replyParts(reply).slice(0, due).join("");
      return { checkAt: partAt(startedAt, due + 1), append: soFar.length > written ? soFar.slice(written) : undefined };
    },
    // Nothing to tell: once stopped, its task is never checked again.
    async stop() {},
  };
}

export function localReply(task: Pick<AgentTask, "content">): string {
  const characters = [...task.content];
  const words = task.content.trim().split(/\s+/).filter(Boolean).length;
  const excerpt = characters.length > 120 ? `${characters.slice(0, 120).join("")}…` : task.content;
  return `Done. I worked on your request (${characters.length} characters, ${words} words): “${excerpt}”`;
}

/** How the built-in agent's reply acknowledges a steering text it took. */
export const noted = (text: string) => ` Noted: “${firstCharacters(text, NOTED_MAX)}”`;

/** The reply cut at word boundaries into LOCAL_REPLY_PARTS pieces that join back to it. */
export function replyParts(reply: string): string[] {
  const words = reply.split(/(?<=\s)/);
  const size = Math.ceil(words.length / LOCAL_REPLY_PARTS);
  return Array.from({ length: LOCAL_REPLY_PARTS }, (_, i) => words.slice(i * size, (i + 1) * size).join(""));
}
