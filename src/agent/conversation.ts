import { firstCharacters } from "../text";

/** One earlier message of the chat as the model sees it: what a user wrote, or what the agent answered. */
export type Turn = { role: "user" | "assistant"; content: string };

// At most this many earlier messages are looked at, whatever the budget.
const TURNS_EXAMINED_MAX = 1_000;
// A quoted reply target is cut to this many characters: it points at the message, the history has the rest.
const QUOTE_MAX = 2_000;

/**
 * What the model is given: the chat's earlier turns, oldest first, as many of the newest as fit
 * `budget` characters and among the newest TURNS_EXAMINED_MAX (the message it answers always goes, last, whatever its length).
 * `earlier` yields the turns newest first, so a long chat is read only as far back as the budget reaches.
 */
export function conversation(earlier: Iterable<Turn>, current: string, budget: number): Turn[] {
  const kept: Turn[] = [];
  let used = current.length;
  let examined = 0;
  for (const turn of earlier) {
    // Empty replies (failed tasks) cost no budget, so the rows read are bounded on their own.
    if (++examined > TURNS_EXAMINED_MAX) break;
    if (!turn.content) continue;
    used += turn.content.length;
    if (used > budget) break;
    kept.push(turn);
  }
  return [...kept.reverse(), { role: "user", content: current }];
}

/** The message the model answers, with the earlier message it replies to quoted above it. */
export function withQuote(content: string, quoted: string | undefined): string {
  if (quoted === undefined) return content;
  const first = firstCharacters(quoted, QUOTE_MAX);
  const cut = first.length < quoted.length ? `${first}…` : quoted;
  const lines = cut.split("\n").map((line) => `> ${line}`);
  return `In reply to this earlier message:\n${lines.join("\n")}\n\n${content}`;
}
