/** What a personal API token may do: chat:read for the GET chat operations, chat:write for the rest. */
export const SCOPES = ["chat:read", "chat:write"] as const;
export type Scope = (typeof SCOPES)[number];
