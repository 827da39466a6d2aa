import { fromBase64Url } from "./crypto";
import type { Env } from "./env";
import { log } from "./log";

/** Every var the Worker reads, parsed once with its documented default (docs/operations.md, "Vars"). */
export type Config = {
  adminToken: string | undefined;
  /** The web application's address: root-relative banner links resolve against it. */
  appOrigin: string;
  /** Origins whose session cookie is honoured on /auth/*. */
  appOrigins: string[];
  /** The Worker's public origin (PUBLIC_URL), where an http agent calls back; never taken from a request. */
  publicOrigin: string | undefined;
  rateLimitPerMinute: number;
  /** timeoutMs: how long any task may run (AGENT_TIMEOUT_SECONDS); a task still working then fails, credits returned. */
  agent: AgentConfig & { timeoutMs: number };
  taskCreditCost: number;
  catalogCacheSeconds: number;
  /** How long a question the agent asks stays pending before it expires (QUESTION_TTL_HOURS). */
  questionTtlMs: number;
  /**
   * What seals the values MCP clients hold and send back (task handles, requestStates, 2025 elicitation ids, session
   * ids): MCP_STATE_KEY and MCP_STATE_KEY_PREVIOUS as AES-256 keys, and how long input is awaited (MCP_INPUT_TTL_SECONDS).
   * Undefined when the key is unset or not 32 bytes of base64url: then none of it is offered.
   */
  mcpState: McpStateConfig | undefined;
  /** DEV_SERVER_ID: set by the project's scripts to a fresh value per wrangler dev they start; unset in every deployment. */
  devServerId: string | undefined;
};

export type McpStateConfig = { key: Uint8Array; previous: Uint8Array | undefined; inputTtlMs: number };

export type ModelAgentConfig = {
  mode: "openai" | "workers-ai";
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  systemPrompt: string;
  tools: boolean;
  /** Ask for the model's token counts (AGENT_USAGE, on unless "off", for servers that refuse stream_options). */
  usage: boolean;
  historyChars: number;
};
export type AgentConfig =
  | { mode: "local"; delayMs: number }
  | { mode: "http"; url: string | undefined; secret: string | undefined }
  | ModelAgentConfig
  // An AGENT_MODE this service does not know: every task fails, saying so.
  | { mode: "unknown"; named: string };

export const DEFAULT_SYSTEM_PROMPT =
  "You are the assistant of a project chat. Answer the user's latest message helpfully and concisely. When you cannot go on without the user's choice or information, call ask_user with one clear question.";
// How much of the chat's history a model sees, in characters, newest messages first (docs/guide/agent.md).
const DEFAULT_HISTORY_CHARS = 24_000;

const DEFAULT_APP_ORIGIN = "http://localhost:5173";
const parsed = new WeakMap<Env, Config>();

/** The configuration of this environment; env is the same object for every request of an isolate, so this parses once. */
export function config(env: Env): Config {
  let value = parsed.get(env);
  if (!value) parsed.set(env, (value = parse(env)));
  return value;
}

function parse(env: Env): Config {
  const appOrigin = originOf(env.APP_ORIGIN) ?? DEFAULT_APP_ORIGIN;
  return {
    adminToken: env.ADMIN_TOKEN || undefined,
    appOrigin,
    appOrigins: env.APP_ORIGINS
      ? env.APP_ORIGINS.split(",")
          .map((o) => o.trim().replace(/\/$/, ""))
          .filter(Boolean)
      : [appOrigin],
    publicOrigin: originOf(env.PUBLIC_URL),
    rateLimitPerMinute: Math.max(1, Math.floor(count(env.RATE_LIMIT_PER_MINUTE, 60))),
    agent: { ...agentConfig(env), timeoutMs: count(env.AGENT_TIMEOUT_SECONDS, 600) * 1000 },
    taskCreditCost: Math.floor(count(env.TASK_CREDIT_COST, 1)),
    catalogCacheSeconds: count(env.CATALOG_CACHE_SECONDS, 30),
    questionTtlMs: positive(env.QUESTION_TTL_HOURS, 168) * 3_600_000,
    devServerId: env.DEV_SERVER_ID || undefined,
    mcpState: mcpStateConfig(env),
  };
}

// The longest a person may take to answer a form an MCP client shows (MCP_INPUT_TTL_SECONDS), and its default.
const INPUT_TTL_MAX_SECONDS = 86_400;
const INPUT_TTL_DEFAULT_SECONDS = 3600;

/** An AES-256 key given as base64url, or undefined (with one error logged) when it is set to anything else. */
function stateKey(name: string, value: string | undefined): Uint8Array | undefined {
  if (!value) return undefined;
  const key = fromBase64Url(value.trim());
  if (key?.byteLength === 32) return key;
  // Never the value itself: it is a secret, however malformed.
  log.error("mcp_state_key_invalid", { var: name, why: "not 32 bytes of base64url" });
  return undefined;
}

function mcpStateConfig(env: Env): McpStateConfig | undefined {
  const key = stateKey("MCP_STATE_KEY", env.MCP_STATE_KEY);
  if (!key) return undefined;
  const ttl = count(env.MCP_INPUT_TTL_SECONDS, INPUT_TTL_DEFAULT_SECONDS);
  const seconds = Number.isInteger(ttl) && ttl >= 1 && ttl <= INPUT_TTL_MAX_SECONDS ? ttl : INPUT_TTL_DEFAULT_SECONDS;
  return { key, previous: stateKey("MCP_STATE_KEY_PREVIOUS", env.MCP_STATE_KEY_PREVIOUS), inputTtlMs: seconds * 1000 };
}

function agentConfig(env: Env): AgentConfig {
  const mode = (env.AGENT_MODE ?? "").trim() || "local";
  if (mode === "local") return { mode, delayMs: count(env.LOCAL_AGENT_DELAY_MS, 1500) };
  if (mode === "http") return { mode, url: env.AGENT_URL || undefined, secret: env.AGENT_SECRET || undefined };
  if (mode === "openai" || mode === "workers-ai") {
    return {
      mode,
      baseUrl: env.AGENT_BASE_URL?.trim() || undefined,
      apiKey: env.AGENT_API_KEY || undefined,
      model: env.AGENT_MODEL?.trim() || undefined,
      systemPrompt: env.AGENT_SYSTEM_PROMPT?.trim() || DEFAULT_SYSTEM_PROMPT,
      tools: isOn(env.AGENT_TOOLS),
      usage: isOn(env.AGENT_USAGE),
      historyChars: Math.floor(count(env.AGENT_HISTORY_CHARS, DEFAULT_HISTORY_CHARS)),
    };
  }
  return { mode: "unknown", named: mode.slice(0, 40) };
}

/** A switch that is on unless set to "off". */
const isOn = (value: string | undefined) => (value ?? "on").trim().toLowerCase() !== "off";

/** A non-negative number, or the default when unset or not a number. */
function count(value: string | undefined, fallback: number): number {
  const n = value === undefined || value.trim() === "" ? NaN : Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** A positive number (fractions allowed), or the default when unset, zero or not a number. */
function positive(value: string | undefined, fallback: number): number {
  const n = count(value, fallback);
  return n > 0 ? n : fallback;
}

/** The origin of an http(s) URL, or undefined for anything else. */
function originOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
