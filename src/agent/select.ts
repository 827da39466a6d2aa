import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createWorkersAI } from "workers-ai-provider";
import type { Config, ModelAgentConfig } from "../config";
import { httpAgent } from "./http";
import { localAgent } from "./local";
import { modelAgent } from "./model";
import type { AgentPort } from "./port";

/** What a model agent needs from where it runs: the Workers AI binding, and a way to keep the object running. */
export type AgentHost = { ai: Ai | undefined; keepAlive: (work: Promise<unknown>) => void };

/** The agent adapter AGENT_MODE names; a misconfigured one fails each task, saying what is missing. */
export function agentFor({ agent, publicOrigin, appOrigin }: Pick<Config, "agent" | "publicOrigin" | "appOrigin">, host?: AgentHost): AgentPort {
  switch (agent.mode) {
    case "local":
      return localAgent(agent.delayMs, appOrigin);
    case "http": {
      // PUBLIC_URL is where the agent calls back with its result and the shared secret.
      const missing = [!agent.url && "AGENT_URL", !agent.secret && "AGENT_SECRET", !publicOrigin && "PUBLIC_URL"].filter((name): name is string => !!name);
      if (!agent.url || !agent.secret || missing.length > 0) return misconfigured(`AGENT_MODE is http but ${listed(missing)} not set`);
      return httpAgent({ url: agent.url, secret: agent.secret, resultTimeoutMs: agent.timeoutMs });
    }
    case "openai":
    case "workers-ai":
      return modelAgentFor(agent, host);
    default:
      return misconfigured(`AGENT_MODE "${agent.named}" is not one of local, http, openai, workers-ai`);
  }
}

function modelAgentFor(agent: ModelAgentConfig, host: AgentHost | undefined): AgentPort {
  const missing = [!agent.model && "AGENT_MODEL"];
  if (agent.mode === "openai") missing.push(!agent.baseUrl && "AGENT_BASE_URL");
  else missing.push(!host?.ai && "the AI binding");
  const names = missing.filter((name): name is string => !!name);
  if (names.length > 0 || !host || !agent.model) return misconfigured(`AGENT_MODE is ${agent.mode} but ${listed(names.length ? names : ["the object's host"])} not set`);
  const model =
    agent.mode === "openai"
      ? createOpenAICompatible({ name: "agent", baseURL: agent.baseUrl!, apiKey: agent.apiKey, includeUsage: agent.usage }).chatModel(agent.model)
      : createWorkersAI({ binding: host.ai! })(agent.model);
  return modelAgent({ model, systemPrompt: agent.systemPrompt, tools: agent.tools, historyChars: agent.historyChars, keepAlive: host.keepAlive, mode: agent.mode });
}

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
