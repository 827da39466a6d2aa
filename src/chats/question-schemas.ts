import { z } from "@hono/zod-openapi";
import {
  ACTION_INPUT_MAX_BYTES,
  ACTION_NAME_MAX,
  ACTION_SUMMARY_MAX,
  CONTENT_MAX,
  DESCRIPTION_MAX,
  LABEL_MAX,
  OPTION_ID_MAX,
  OPTIONS_MAX,
  PROMPT_MAX,
  REASON_MAX,
  URL_MAX,
} from "./limits";
import { ChatParams, characters, Submission } from "./schemas";

/** The shapes of a question the agent asks and of the answers it takes (CONTRACT "Questions the agent asks"). */

export const QUESTION_KINDS = ["text", "choice", "approval", "connection"] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];
export const QUESTION_STATUSES = ["pending", "answered", "declined", "superseded", "expired"] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

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

export const ChoiceAnswer = z
  .strictObject({
    optionIds: z.array(z.string().min(1).max(OPTION_ID_MAX)).max(OPTIONS_MAX).openapi({
      description: "The question's option ids: one, or with multiSelect one or more; none if a text is given (allowText)",
    }),
    text: AnswerText.optional().openapi({ description: "Only if allowText" }),
  })
  .openapi("ChoiceAnswer", { description: "Answers a choice" });
export const TextAnswer = z.strictObject({ text: AnswerText }).openapi("TextAnswer", { description: "Answers a text question, or a choice whose allowText is true" });
export const ApprovalAnswer = z
  .strictObject({ decision: z.enum(["approve", "deny"]), reason: Reason.optional() })
  .openapi("ApprovalAnswer", { description: "Answers an approval" });
export const ConnectionAnswer = z.strictObject({ connected: z.literal(true) }).openapi("ConnectionAnswer", { description: "Answers a connection: the user says it is made" });
export const DeclineAnswer = z
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

const ANSWERS = [ChoiceAnswer, TextAnswer, ApprovalAnswer, ConnectionAnswer, DeclineAnswer] as const;
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

// ---- the question ----
// A registered component made .nullable() becomes nullable itself in the document (zod-to-openapi 9): a union with null leaves it as it is.
const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);
export const Question = z
  .object({
    id: z.uuid(),
    chatId: z.uuid(),
    taskId: z.uuid().openapi({ description: "The task whose reply asks" }),
    messageId: z.uuid().openapi({ description: "The reply that asks (its questionId is this id)" }),
    kind: z.enum(QUESTION_KINDS),
    status: z.enum(QUESTION_STATUSES),
    prompt: z.string().openapi({ minLength: 1, maxLength: PROMPT_MAX }),
    options: z
      .array(QuestionOption)
      .nullable()
      .openapi({ description: `A choice's 1 to ${OPTIONS_MAX} options; null for the other kinds` }),
    multiSelect: z.boolean().openapi({ description: "A choice that takes one or more picks; false otherwise" }),
    allowText: z.boolean().openapi({ description: "A free text may be given: true for text, and for a choice that allows it" }),
    action: orNull(QuestionAction).openapi({ description: "What an approval asks leave to do; null for the other kinds" }),
    url: z.string().nullable().openapi({ maxLength: URL_MAX, description: "Where a connection is made (outside this API); null for the other kinds" }),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime().openapi({ description: "QUESTION_TTL_HOURS after it was asked: a question still pending then becomes expired" }),
    closedAt: z.iso.datetime().nullable(),
    answer: z
      .union([...ANSWERS, z.null()])
      .openapi({ description: "The answer as sent (a send that answered: { text }); null unless answered or declined" }, { unionPreferredType: "oneOf" }),
    submissionId: z.uuid().nullable().openapi({ description: "What answered, declined or superseded it: a submission (null otherwise)" }),
  })
  .openapi("Question", {
    description: "A question the agent asked: at most one per chat is pending",
    example: {
      id: "9b2f3c1e-5d4a-4c7b-8e6f-0a1b2c3d4e5f",
      chatId: "0b9e6a52-1c3d-4e5f-8a7b-6c5d4e3f2a1b",
      taskId: "6f1c2d3e-4a5b-4c6d-9e8f-7a6b5c4d3e2f",
      messageId: "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f",
      kind: "choice",
      status: "pending",
      prompt: "Pick a color",
      options: [
        { id: "1", label: "Red", description: null },
        { id: "2", label: "Green", description: null },
      ],
      multiSelect: false,
      allowText: false,
      action: null,
      url: null,
      createdAt: "2026-11-20T10:00:00.000Z",
      expiresAt: "2026-11-27T10:00:00.000Z",
      closedAt: null,
      answer: null,
      submissionId: null,
    },
  });
export type Question = z.infer<typeof Question>;

export const AnswerSubmission = Submission.extend({ questionId: z.uuid().openapi({ description: "The question answered" }) }).openapi("AnswerSubmission");
export type AnswerSubmission = z.infer<typeof AnswerSubmission>;

export const QuestionParams = ChatParams.extend({ questionId: z.string().openapi({ format: "uuid" }) });
