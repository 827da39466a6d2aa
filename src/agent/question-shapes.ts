import { z } from "@hono/zod-openapi";
import { characters } from "../text";
import { ACTION_INPUT_MAX_BYTES, ACTION_NAME_MAX, ACTION_SUMMARY_MAX, CONTENT_MAX, DESCRIPTION_MAX, LABEL_MAX, OPTION_ID_MAX, OPTIONS_MAX, REASON_MAX } from "./limits";

/** What an agent can ask and the answers it takes: the API's question and answer bodies are built from these. */

export const QUESTION_KINDS = ["text", "choice", "approval", "connection"] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export const QuestionOption = z
  .object({
    id: z.string().openapi({ minLength: 1, maxLength: OPTION_ID_MAX, description: "Unique within the question; what an answer's optionIds name", example: "1" }),
    label: z.string().openapi({ minLength: 1, maxLength: LABEL_MAX, example: "Red" }),
    description: z.string().nullable().openapi({ maxLength: DESCRIPTION_MAX }),
  })
  .openapi("QuestionOption");
export type QuestionOption = z.infer<typeof QuestionOption>;

export const QuestionAction = z
  .object({
    name: z.string().openapi({ minLength: 1, maxLength: ACTION_NAME_MAX, description: "What the agent would call", example: "delete_branch" }),
    summary: z.string().openapi({ minLength: 1, maxLength: ACTION_SUMMARY_MAX, description: "One line for a person", example: "delete the branch old-ui" }),
    input: z.record(z.string(), z.any()).openapi({ description: `What it would pass (at most ${ACTION_INPUT_MAX_BYTES} bytes of JSON)`, example: { branch: "old-ui" } }),
  })
  .openapi("QuestionAction", { description: "What an approval asks leave to do" });
export type QuestionAction = z.infer<typeof QuestionAction>;

// ---- answers: exactly one of these bodies ----
const AnswerText = characters(1, CONTENT_MAX, "text");
const Reason = characters(0, REASON_MAX, "reason");

const ChoiceAnswer = z
  .strictObject({
    optionIds: z.array(z.string().min(1).max(OPTION_ID_MAX)).max(OPTIONS_MAX).openapi({
      description: "The question's option ids: one, or with multiSelect one or more; none if a text is given (allowText)",
    }),
    text: AnswerText.optional().openapi({ description: "Only if allowText" }),
  })
  .openapi("ChoiceAnswer", { description: "Answers a choice" });
const TextAnswer = z.strictObject({ text: AnswerText }).openapi("TextAnswer", { description: "Answers a text question, or a choice whose allowText is true" });
const ApprovalAnswer = z.strictObject({ decision: z.enum(["approve", "deny"]), reason: Reason.optional() }).openapi("ApprovalAnswer", { description: "Answers an approval" });
const ConnectionAnswer = z.strictObject({ connected: z.literal(true) }).openapi("ConnectionAnswer", { description: "Answers a connection: the user says it is made" });
const DeclineAnswer = z
  .strictObject({ decline: z.literal(true), reason: Reason.optional() })
  .openapi("DeclineAnswer", { description: "Answers any kind: the user will not answer" });

const SHAPES = "{ optionIds, text? }, { text }, { decision, reason? }, { connected: true } or { decline: true, reason? }";
type UnionIssue = { errors?: { code: string; path: PropertyKey[]; message: string }[][] };

/** Names the shape the body came closest to (the fewest problems, no unknown field) and its first problem, unless it only lacks fields. */
function answerShapeError(issue: unknown): string {
  const lists = ((issue as UnionIssue).errors ?? []).filter((list) => !list.some((i) => i.code === "unrecognized_keys"));
  const nearest = lists.sort((a, b) => a.length - b.length)[0];
  const problem = nearest?.find((i) => i.message !== "required");
  const where = problem?.path.length ? `${problem.path.map(String).join(".")}: ` : "";
  return `The answer must be exactly one of ${SHAPES}${problem ? ` (${where}${problem.message})` : ""}.`;
}

export const ANSWERS = [ChoiceAnswer, TextAnswer, ApprovalAnswer, ConnectionAnswer, DeclineAnswer] as const;
export const Answer = z
  .union(ANSWERS, { error: answerShapeError })
  .openapi("Answer", { description: "Exactly one of these bodies; which ones fit depends on the question's kind" }, { unionPreferredType: "oneOf" });
export type Answer = z.infer<typeof Answer>;

export const ANSWER_EXAMPLES = {
  pick: { value: { optionIds: ["2"] } },
  picksAndText: { value: { optionIds: ["1", "3"], text: "and well done" } },
  text: { value: { text: "Call it Northwind" } },
  approve: { value: { decision: "approve" } },
  deny: { value: { decision: "deny", reason: "keep the old branch" } },
  connected: { value: { connected: true } },
  decline: { value: { decline: true } },
};
