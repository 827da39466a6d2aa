/** What every agent's work is bounded by: the chat object enforces these, the routes document them, agents obey them. */

// Each steering text a model takes is another paid call: a task takes at most this many; later ones run as tasks of their own.
export const STEERING_PER_TASK = 5;
// A reply (and an agent's result or partial output) holds at most this many UTF-16 units; a message's content as many characters.
export const REPLY_MAX = 100_000;
export const CONTENT_MAX = 100_000;

// A question the agent asks: its prompt and options, in characters (code points).
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
