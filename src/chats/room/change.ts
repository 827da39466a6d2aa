/**
 * Whether the chat list shows a change: "listed" (the default) touches the chat, so the list hears of it;
 * "unlisted" is for what the summary does not count (a reply's text while it streams, a steering text
 * cancelled, a failed entry leaving the queue) and for publishing alone.
 */
export type Listing = "listed" | "unlisted";

/**
 * One change of the chat: `write` records it in one synchronous stretch; then the chat is touched
 * (when listed), what changed is published and the alarm is derived again. Every write goes through
 * here, so none can forget one of the three.
 */
export type Change = (now: number, write: () => void, listing?: Listing) => void;

/** A change that writes nothing: what is due is published (failed entries whose time ended leave the queue). */
export const nothing = () => {};
