/** What a personal API token may do: chat:read for the GET chat operations, chat:write for the rest. */
export const SCOPES = ["chat:read", "chat:write"] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope lets its holder do, in a sentence a person can judge (the consent and account pages show it). */
export const SCOPE_SENTENCES: Record<Scope, string> = {
  "chat:read": "Read your projects, their chats, messages and queues, and their credits and usage.",
  "chat:write": "Create chats, send messages, and steer or stop the agent's work, which spends your projects' credits.",
};
