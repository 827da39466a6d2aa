import type { Answer } from "../agent/question-shapes";
import type { Question } from "../chats/question-schemas";

const APPROVE = new Set(["approve", "approved", "yes", "y", "ok"]);
const DENY = new Set(["deny", "denied", "no", "n", "reject"]);

export type TextAnswer = { kind: "answer"; answer: Answer } | { kind: "unfit"; why: string };

/** A choice's pick by its label (case-insensitive), then its id. */
function pick(question: Question, word: string): string | undefined {
  const options = question.options ?? [];
  const lower = word.toLowerCase();
  return (options.find((option) => option.label.toLowerCase() === lower) ?? options.find((option) => option.id.toLowerCase() === lower))?.id;
}

/**
 * An answer given in words, read by the question's kind: a text as it is; a choice by its labels or ids (several,
 * comma-separated, where it takes more than one), else as free text where it allows that; an approval from the usual
 * words for yes and no; a connection as made, whatever the words.
 */
export function answerFromText(question: Question, raw: string): TextAnswer {
  const text = raw.trim();
  switch (question.kind) {
    case "text":
      return { kind: "answer", answer: { text } };
    case "connection":
      return { kind: "answer", answer: { connected: true } };
    case "approval": {
      const word = text.toLowerCase().replace(/[.!]$/, "");
      if (APPROVE.has(word)) return { kind: "answer", answer: { decision: "approve" } };
      if (DENY.has(word)) return { kind: "answer", answer: { decision: "deny" } };
      return { kind: "unfit", why: "This question takes approve or deny (yes or no)." };
    }
    case "choice": {
      const words = question.multiSelect ? text.split(",").map((word) => word.trim()) : [text];
      const picked = words.map((word) => pick(question, word));
      if (words.length > 0 && picked.every((id) => id !== undefined)) return { kind: "answer", answer: { optionIds: [...new Set(picked as string[])] } };
      if (question.allowText) return { kind: "answer", answer: { optionIds: [], text } };
      const labels = (question.options ?? []).map((option) => option.label).join(", ");
      return { kind: "unfit", why: `This question takes one of its options${question.multiSelect ? " (several, comma-separated)" : ""}: ${labels}.` };
    }
  }
}
