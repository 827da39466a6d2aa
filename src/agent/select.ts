import { numberVar, type Env } from "../env";
import { httpAgent } from "./http";
import { localAgent } from "./local";
import type { AgentPort } from "./port";

/** The agent adapter AGENT_MODE names; a misconfigured http agent fails each task with the reason. */
export function agentFor(env: Env): AgentPort {
  if (env.AGENT_MODE === "http") {
    if (!env.AGENT_URL || !env.AGENT_SECRET) {
      return {
        start: async () => { throw new Error("AGENT_MODE is http but AGENT_URL or AGENT_SECRET is not set"); },
        check: () => ({ status: "failed", content: "", error: "The agent is not configured." }),
      };
    }
    return httpAgent({ url: env.AGENT_URL, secret: env.AGENT_SECRET, resultTimeoutMs: numberVar(env.AGENT_TIMEOUT_SECONDS, 600) * 1000 });
  }
  return localAgent(numberVar(env.LOCAL_AGENT_DELAY_MS, 1500));
}
