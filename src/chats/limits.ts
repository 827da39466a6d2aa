/** The chat's bounds, shared by the chat object, its routes and their documentation. */

// The queue bound: entries that wait or are being dispatched, and the UTF-8 bytes of their content.
export const QUEUE_MAX_ENTRIES = 100;
export const QUEUE_MAX_BYTES = 1_000_000;
// Each steering text a model takes is another paid call: a task takes at most this many; later ones run as tasks of their own.
export const STEERING_PER_TASK = 5;
// A reply (and an agent's result or partial output) holds at most this many UTF-16 units; a message's content as many characters.
export const REPLY_MAX = 100_000;
export const CONTENT_MAX = 100_000;
// One alarm takes at most this many steps (dispatches, checks, ends); the rest goes on in the next alarm.
export const ALARM_STEPS = 50;

// A question the agent asks (CONTRACT "Questions the agent asks"): its prompt and options, in characters (code points).
export const PROMPT_MAX = 4_000;
export const OPTIONS_MAX = 20;
export const OPTION_ID_MAX = 64;
export const LABEL_MAX = 200;
export const DESCRIPTION_MAX = 1_000;
// An approval's action: what it would call, a one-line summary for a person, and its input as JSON (UTF-8 bytes).
export const ACTION_NAME_MAX = 100;
export const ACTION_SUMMARY_MAX = 500;
export const ACTION_INPUT_MAX_BYTES = 16_384;
// A connection's url, and the reason an approval's denial or a decline may give.
export const URL_MAX = 2_000;
export const REASON_MAX = 2_000;
