import type { AgentPort, AgentTask } from "./port";

/** The built-in agent: works for delayMs, then replies deterministically from the content. */
export function localAgent(delayMs: number): AgentPort {
  return {
    async start(_task, now) {
      return { kind: "pending", checkAt: now + delayMs };
    },
    check(task, startedAt, now) {
      if (now < startedAt + delayMs) return { checkAt: startedAt + delayMs };
      return { status: "success", content: localReply(task) };
    },
  };
}

export function localReply(task: Pick<AgentTask, "content">): string {
  const characters = [...task.content];
  const words = task.content.trim().split(/\s+/).filter(Boolean).length;
  const excerpt = characters.length > 120 ? `${characters.slice(0, 120).join("")}…` : task.content;
  return `Done. I worked on your request (${characters.length} characters, ${words} words): “${excerpt}”`;
}
