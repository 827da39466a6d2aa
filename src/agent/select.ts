import type { Config } from "../config";
import { httpAgent } from "./http";
import { localAgent } from "./local";
import type { AgentPort } from "./port";

/** The agent adapter AGENT_MODE names; a misconfigured http agent fails each task with the reason. */
export function agentFor({ agent, publicOrigin }: Pick<Config, "agent" | "publicOrigin">): AgentPort {
  if (agent.mode === "local") return localAgent(agent.delayMs);
  // PUBLIC_URL is where the agent calls back with its result and the shared secret.
  const missing = [!agent.url && "AGENT_URL", !agent.secret && "AGENT_SECRET", !publicOrigin && "PUBLIC_URL"].filter(Boolean);
  if (!agent.url || !agent.secret || missing.length > 0) {
    return {
      start: async () => {
        throw new Error(`AGENT_MODE is http but ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not set`);
      },
      check: () => ({ status: "failed", content: "", error: "The agent is not configured." }),
      stop: async () => {},
    };
  }
  return httpAgent({ url: agent.url, secret: agent.secret, resultTimeoutMs: agent.timeoutMs });
}
