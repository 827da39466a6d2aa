import { describe, expect, it } from "vitest";
import { type AskedQuestion, choiceQuestion, modelQuestion, textQuestion } from "../../../src/agent/asked-question";
import type { Answer } from "../../../src/agent/question-shapes";
import { answerJson, fitAnswer, statusAfter } from "../../../src/chats/room/answers";
import { type StoredTurn, turnsFrom } from "../../../src/chats/room/earlier-turns";

// The chat object's pure helpers, tested without booting an object: the integration tests cover them in place.

const turn = (role: string, content: string, task_id: string | null = null): StoredTurn => ({ role, content, task_id });

describe("turnsFrom", () => {
  it("gives user messages and replies newest first, as a model's roles", () => {
    const turns = [...turnsFrom([turn("owner", "second reply", "t2"), turn("user", "second", null), turn("owner", "first reply", "t1"), turn("user", "first", null)])];
    expect(turns).toEqual([
      { role: "assistant", content: "second reply" },
      { role: "user", content: "second" },
      { role: "assistant", content: "first reply" },
      { role: "user", content: "first" },
    ]);
  });

  it("puts a steering text stored after its task's reply began before that reply", () => {
    // Newest first: the steering text (taken by t1) was stored after the reply row was written.
    const turns = [...turnsFrom([turn("user", "steer", "t1"), turn("owner", "reply", "t1"), turn("user", "ask", null)])];
    expect(turns.map((t) => t.content)).toEqual(["reply", "steer", "ask"]);
  });

  it("still gives a steering text whose task wrote no reply", () => {
    expect([...turnsFrom([turn("user", "steer", "t9"), turn("user", "ask", null)])].map((t) => t.content)).toEqual(["ask", "steer"]);
  });

  it("reads no further back than the caller goes", () => {
    let read = 0;
    function* rows() {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield turn(i % 2 ? "user" : "owner", `m${i}`, null);
      }
    }
    const cursor = turnsFrom(rows());
    cursor.next();
    cursor.next();
    expect(read).toBe(2);
  });
});

describe("fitAnswer", () => {
  const choice = choiceQuestion("Pick", [{ label: "Red" }, { label: "Green" }, { label: "Blue" }]);
  const many = choiceQuestion("Pick", [{ label: "Red" }, { label: "Green" }, { label: "Blue" }], true, true);

  it("renders picks in the question's order, whatever the order sent", () => {
    expect(fitAnswer(many, { optionIds: ["3", "1"], text: "thanks" })).toEqual({ fits: true, content: "Red, Blue\nthanks" });
  });

  it.each([
    [choice, { optionIds: ["1", "2"] }, "This choice takes one pick."],
    [choice, { optionIds: ["9"] }, '"9" is not an option of this question.'],
    [choice, { optionIds: ["1", "1"] }, "An option is picked more than once."],
    [choice, { optionIds: [] }, "Pick an option."],
    [choice, { text: "mauve" }, "This choice takes no text: answer with optionIds."],
    [textQuestion("Name?"), { decision: "approve" }, "A decision answers an approval; this question is a text question."],
    [textQuestion("Name?"), { connected: true }, "connected answers a connection; this question is a text question."],
  ] satisfies [AskedQuestion, Answer, string][])("refuses an answer that does not fit (%#)", (question, answer, why) => {
    expect(fitAnswer(question, answer)).toEqual({ fits: false, why });
  });

  it("lets any kind be declined, with the reason in words", () => {
    expect(fitAnswer(choice, { decline: true, reason: "not now" })).toEqual({ fits: true, content: "Declined. not now" });
    expect(statusAfter({ decline: true })).toBe("declined");
    expect(statusAfter({ optionIds: ["1"] })).toBe("answered");
  });

  it("stores the same body sent in another field order as the same text", () => {
    expect(answerJson({ text: "x", optionIds: ["1"] })).toBe(answerJson({ optionIds: ["1"], text: "x" }));
  });
});

describe("modelQuestion", () => {
  it("takes a model's ask_user as far as it is a question", () => {
    expect(modelQuestion('{"question":"Color?","options":[{"label":"Red"},{"label":""},{}]}')).toMatchObject({ kind: "choice", options: [{ id: "1", label: "Red" }] });
    expect(modelQuestion({ question: "Why?" })).toMatchObject({ kind: "text", prompt: "Why?", allowText: true });
    expect(modelQuestion("not json")).toBeUndefined();
    expect(modelQuestion({ question: "  " })).toBeUndefined();
  });
});
