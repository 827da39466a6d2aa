import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createWorkersAI } from "workers-ai-provider";
import type { AgentConfig, Config, ModelAgentConfig } from "../config";
import { httpAgent } from "./http";
import { localAgent } from "./local";
import { modelAgent } from "./model";
import type { AgentPort } from "./port";

/** What a model agent needs from where it runs: the Workers AI binding, and a way to keep the object running. */
export type AgentHost = { ai: Ai | undefined; keepAlive: (work: Promise<unknown>) => void };

/** The agent adapter AGENT_MODE names; a misconfigured one fails each task, saying what is missing. */
export function agentFor(settings: AgentSettings, host?: AgentHost): AgentPort {
  const problem = misconfiguration(settings, host);
  if (problem) return misconfigured(problem);
  const { agent } = settings;
  switch (agent.mode) {
    case "local":
      return localAgent(agent.delayMs, settings.appOrigin);
    case "http":
      return httpAgent({ url: agent.url!, secret: agent.secret!, resultTimeoutMs: agent.timeoutMs });
    default:
      // openai or workers-ai with a host: misconfiguration() has refused an unknown mode and a missing host.
      return modelAgentFor(agent as ModelAgentConfig, host!);
  }
}

/**
 * What agent writes the replies, in one line and never with a secret (AGENT_API_KEY, AGENT_SECRET, or
 * credentials in a URL): `npm run dev` prints it when it starts, since wrangler hides vars given with --var.
 */
export function describeAgent(settings: AgentSettings, host: Pick<AgentHost, "ai"> | undefined): string {
  const problem = misconfiguration(settings, host);
  const named = agentName(settings.agent);
  return problem ? `${named}: ${problem}, so every task fails` : named;
}

function agentName(agent: AgentConfig): string {
  switch (agent.mode) {
    case "local":
      return `local (the built-in stand-in agent, ${agent.delayMs} ms a task)`;
    case "http":
      return `http (tasks go to ${shownUrl(agent.url)})`;
    case "openai":
      return `openai (model ${agent.model ?? "unset"} at ${shownUrl(agent.baseUrl)}, ${agent.apiKey ? "with" : "without"} AGENT_API_KEY)`;
    case "workers-ai":
      return `workers-ai (model ${agent.model ?? "unset"}, through the AI binding)`;
    default:
      return `"${agent.named}"`;
  }
}

type AgentSettings = Pick<Config, "agent" | "publicOrigin" | "appOrigin">;

/** Why the configured agent cannot run a task (which setting is missing), or undefined when it can. */
function misconfiguration({ agent, publicOrigin }: AgentSettings, host: Pick<AgentHost, "ai"> | undefined): string | undefined {
  switch (agent.mode) {
    case "local":
      return undefined;
    case "http": {
      // PUBLIC_URL is where the agent calls back with its result and the shared secret.
      const missing = present([!agent.url && "AGENT_URL", !agent.secret && "AGENT_SECRET", !publicOrigin && "PUBLIC_URL"]);
      return missing.length > 0 ? `AGENT_MODE is http but ${listed(missing)} not set` : undefined;
    }
    case "openai":
    case "workers-ai": {
      const missing = present([!agent.model && "AGENT_MODEL", agent.mode === "openai" ? !agent.baseUrl && "AGENT_BASE_URL" : !host?.ai && "the AI binding"]);
      if (missing.length === 0 && !host) missing.push("the object's host");
      return missing.length > 0 ? `AGENT_MODE is ${agent.mode} but ${listed(missing)} not set` : undefined;
    }
    default:
      return `AGENT_MODE "${agent.named}" is not one of local, http, openai, workers-ai`;
  }
}

function modelAgentFor(agent: ModelAgentConfig, host: AgentHost): AgentPort {
  const model =
    agent.mode === "openai"
      ? createOpenAICompatible({ name: "agent", baseURL: agent.baseUrl!, apiKey: agent.apiKey, includeUsage: agent.usage }).chatModel(agent.model!)
      : createWorkersAI({ binding: host.ai! })(agent.model!);
  return modelAgent({ model, systemPrompt: agent.systemPrompt, tools: agent.tools, historyChars: agent.historyChars, keepAlive: host.keepAlive, mode: agent.mode });
}

/** A URL as it may be shown: no user name, password, query or fragment, which can carry a credential. */
function shownUrl(value: string | undefined): string {
  if (!value) return "an unset URL";
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}`;
  } catch {
    return "an invalid URL";
  }
}

const present = (names: (string | false)[]) => names.filter((name): name is string => !!name);
const listed = (names: string[]) => `${names.join(", ")} ${names.length > 1 ? "are" : "is"}`;

/** Every task fails at once with the reason (the chat shows it as the task's error message). */
function misconfigured(reason: string): AgentPort {
  return {
    start: async () => {
      throw new Error(reason);
    },
    check: () => ({ status: "failed", error: "The agent is not configured." }),
    stop: async () => {},
  };
}
