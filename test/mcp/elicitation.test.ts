import { describe, expect, it } from "vitest";
import type { Question } from "../../src/chats/question-schemas";
import { answerOf, elicitationParams } from "../../src/mcp/elicitation";

const choice = (multiSelect: boolean, allowText: boolean) =>
  ({
    id: crypto.randomUUID(),
    kind: "choice",
    prompt: "Which?",
    options: [
      { id: "a", label: "A", description: "first" },
      { id: "b", label: "B", description: null },
    ],
    multiSelect,
    allowText,
    action: null,
    url: null,
  }) as unknown as Question;

describe("a choice as a form and back", () => {
  it("lets a multi-pick choice that takes text be answered with text alone, picks alone, or both", () => {
    const q = choice(true, true);
    const form = elicitationParams(q) as { requestedSchema: { properties: Record<string, { minItems?: number }>; required?: string[] } };
    expect(form.requestedSchema.properties.choices!.minItems).toBe(0);
    expect(form.requestedSchema.required).toBeUndefined();
    expect(answerOf(q, { action: "accept", content: { text: "neither" } })).toEqual({ kind: "answer", answer: { text: "neither" } });
    expect(answerOf(q, { action: "accept", content: { choices: ["a", "b"] } })).toEqual({ kind: "answer", answer: { optionIds: ["a", "b"] } });
    expect(answerOf(q, { action: "accept", content: { choices: ["b"], text: "and more" } })).toEqual({ kind: "answer", answer: { optionIds: ["b"], text: "and more" } });
    expect(answerOf(q, { action: "accept", content: {} }).kind).toBe("unfit");
  });

  it("requires a pick where no text is taken, and leaves descriptions out of the form", () => {
    const q = choice(false, false);
    const form = elicitationParams(q) as { requestedSchema: { properties: Record<string, unknown>; required: string[] } };
    expect(form.requestedSchema).toEqual({
      type: "object",
      properties: {
        choice: {
          type: "string",
          title: "Choose",
          oneOf: [
            { const: "a", title: "A" },
            { const: "b", title: "B" },
          ],
        },
      },
      required: ["choice"],
    });
    expect(answerOf(q, { action: "accept", content: {} }).kind).toBe("unfit");
    expect(answerOf(q, { action: "decline" })).toEqual({ kind: "answer", answer: { decline: true } });
    expect(answerOf(q, { action: "cancel" })).toEqual({ kind: "cancel" });
    expect(answerOf(q, { action: "maybe" }).kind).toBe("unfit");
  });
});
