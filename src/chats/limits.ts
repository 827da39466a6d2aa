/** The chat's own bounds, shared by the chat object, its routes and their documentation (what agents obey is in agent/limits.ts). */

// The queue bound: entries that wait or are being dispatched, and the UTF-8 bytes of their content.
export const QUEUE_MAX_ENTRIES = 100;
export const QUEUE_MAX_BYTES = 1_000_000;
// One alarm takes at most this many steps (dispatches, checks, ends); the rest goes on in the next alarm.
export const ALARM_STEPS = 50;
// The longest history a fork copies (in messages, and in UTF-8 bytes of content), and one batch of the copy at most: a
// call and its rows stay small, and the source answers other calls between two batches.
export const FORK_LIMITS = { messages: 5_000, bytes: 8_000_000, batchMessages: 200, batchBytes: 1_000_000 } as const;
