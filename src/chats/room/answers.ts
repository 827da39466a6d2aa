import type { AskedQuestion } from "../../agent/asked-question";
import type { QuestionStatus } from "../question-schemas";
import { CONTENT_MAX } from "../../agent/limits";
import type { Answer } from "../../agent/question-shapes";

/** Whether an answer fits its question, and if so its user message's content: the answer in words. */
export type Fit = { fits: true; content: string } | { fits: false; why: string };

const misfit = (why: string): Fit => ({ fits: false, why });
const withReason = (words: string, reason: string | undefined) => (reason ? `${words} ${reason}` : words);

export function fitAnswer(question: Pick<AskedQuestion, "kind" | "options" | "multiSelect" | "allowText">, answer: Answer): Fit {
  if ("decline" in answer) return { fits: true, content: withReason("Declined.", answer.reason) };
  if ("decision" in answer) {
    if (question.kind !== "approval") return misfit(`A decision answers an approval; this question is a ${question.kind} question.`);
    return { fits: true, content: withReason(answer.decision === "approve" ? "Approved." : "Denied.", answer.reason) };
  }
  if ("connected" in answer) {
    return question.kind === "connection" ? { fits: true, content: "Connected." } : misfit(`connected answers a connection; this question is a ${question.kind} question.`);
  }
  if ("optionIds" in answer) return fitChoice(question, answer.optionIds, answer.text);
  if (question.kind === "text") return { fits: true, content: answer.text };
  if (question.kind === "choice" && question.allowText) return fitChoice(question, [], answer.text);
  return misfit(question.kind === "choice" ? "This choice takes no text: answer with optionIds." : `A text does not answer a ${question.kind} question.`);
}

function fitChoice(question: Pick<AskedQuestion, "kind" | "options" | "multiSelect" | "allowText">, picks: string[], text: string | undefined): Fit {
  if (question.kind !== "choice" || !question.options) return misfit(`optionIds answer a choice; this question is a ${question.kind} question.`);
  if (text !== undefined && !question.allowText) return misfit("This choice takes no text, only optionIds.");
  const known = new Set(question.options.map((o) => o.id));
  const unknown = picks.find((id) => !known.has(id));
  if (unknown !== undefined) return misfit(`${JSON.stringify(unknown)} is not an option of this question.`);
  if (new Set(picks).size !== picks.length) return misfit("An option is picked more than once.");
  if (picks.length > 1 && !question.multiSelect) return misfit("This choice takes one pick.");
  if (picks.length === 0 && text === undefined) return misfit(question.allowText ? "Pick an option or give a text." : "Pick an option.");
  const picked = new Set(picks);
  // The question's order, whatever the order of the picks.
  const labels = question.options
    .filter((o) => picked.has(o.id))
    .map((o) => o.label)
    .join(", ");
  const content = labels && text !== undefined ? `${labels}\n${text}` : labels || (text ?? "");
  if (content.length > CONTENT_MAX && [...content].length > CONTENT_MAX) return misfit(`The answer in words would pass ${CONTENT_MAX} characters.`);
  return { fits: true, content };
}

/** The status an accepted answer gives its question. */
export const statusAfter = (answer: Answer): QuestionStatus => ("decline" in answer ? "declined" : "answered");

/** The answer as stored and shown: its fields in one order, so the same body sent twice compares equal. */
export const answerJson = (answer: Answer): string => JSON.stringify(Object.fromEntries(Object.entries(answer).sort(([a], [b]) => (a < b ? -1 : 1))));
