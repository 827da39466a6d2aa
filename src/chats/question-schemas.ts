import { z } from "@hono/zod-openapi";
import { OPTIONS_MAX, PROMPT_MAX, URL_MAX } from "../agent/limits";
import { ANSWERS, QUESTION_KINDS, QuestionAction, QuestionOption } from "../agent/question-shapes";
import { PathId } from "../ids";
import { ChatParams, Submission } from "./schemas";

/** A question as the API shows it: its lifecycle around the shapes an agent asks in. */

const QUESTION_STATUSES = ["pending", "answered", "declined", "superseded", "expired"] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

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

export const QuestionParams = ChatParams.extend({ questionId: PathId });
