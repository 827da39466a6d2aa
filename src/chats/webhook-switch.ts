/**
 * Whether a project has an enabled webhook endpoint. The project's webhooks object numbers each
 * flip, so of two words about the switch the newer one always wins, whatever order they arrive in.
 */
export type WebhookSwitch = { on: boolean; version: number };

/**
 * The switch as a chat is told it: while it is off, `until` is how long the chat may rely on that
 * without hearing from the project again (the project's chat list will tell it first if it flips on).
 */
export type SwitchLease = WebhookSwitch & { until: number };

// How long "off" holds for a chat after its list sync said so: the chats to tell when the switch flips
// on are the ones holding such a lease, so this bounds that fan-out to the chats active this long ago.
export const SWITCH_LEASE_MS = 10 * 60_000;
// The chat list tells chats whose lease ended less than this ago too, in case their clock lags its own.
export const SWITCH_CLOCK_MARGIN_MS = 30_000;
