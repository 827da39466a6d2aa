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
