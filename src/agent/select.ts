import { numberVar, type Env } from "../env";
import { publicOrigin } from "./callback-url";
import { httpAgent } from "./http";
import { localAgent } from "./local";
import type { AgentPort } from "./port";

/** The agent adapter AGENT_MODE names; a misconfigured http agent fails each task with the reason. */
export function agentFor(env: Env): AgentPort {
  if (env.AGENT_MODE === "http") {
    // PUBLIC_URL is where the agent calls back with its result and the shared secret.
    const missing = [!env.AGENT_URL && "AGENT_URL", !env.AGENT_SECRET && "AGENT_SECRET", !publicOrigin(env) && "PUBLIC_URL"].filter(Boolean);
    if (!env.AGENT_URL || !env.AGENT_SECRET || missing.length > 0) {
      return {
        start: async () => { throw new Error(`AGENT_MODE is http but ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} not set`); },
        check: () => ({ status: "failed", content: "", error: "The agent is not configured." }),
      };
    }
    return httpAgent({ url: env.AGENT_URL, secret: env.AGENT_SECRET, resultTimeoutMs: numberVar(env.AGENT_TIMEOUT_SECONDS, 600) * 1000 });
  }
  return localAgent(numberVar(env.LOCAL_AGENT_DELAY_MS, 1500));
}
