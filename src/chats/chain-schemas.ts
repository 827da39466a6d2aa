import { z } from "@hono/zod-openapi";
import { QUESTION_KINDS } from "../agent/question-shapes";
import { Question } from "./question-schemas";
import { Message, SubmissionState } from "./schemas";

/** The states of a chain, its end's: the three working ones first, then the final ones. */
const CHAIN_STATES = ["queued", "working", "awaiting", "completed", "failed", "refused", "cancelled"] as const;
export type ChainState = (typeof CHAIN_STATES)[number];

const ChainLink = z
  .object({
    submissionId: z.uuid(),
    questionId: z.uuid().nullable().openapi({ description: "The question its reply asked; the next link (if any) answered it" }),
    questionKind: z.enum(QUESTION_KINDS).nullable().openapi({ description: "That question's kind" }),
  })
  .openapi("ChainLink");

export const Chain = z
  .object({
    rootId: z.uuid().openapi({ description: "The submission that leads the chain" }),
    state: z.enum(CHAIN_STATES).openapi({
      description:
        "The end's: `queued` (queued or steering), `working` (dispatching or running), `awaiting` (its reply asked a question still pending), " +
        "`completed` (its reply ended success and no question is pending: one that closed superseded or expired included), `failed` (its reply failed), " +
        "`refused` (it could not start: `end.failure` says why), `cancelled` (cancelled, its reply stopped, or its question withdrawn). The last four are final.",
    }),
    end: SubmissionState.openapi({ description: "The chain's last submission" }),
    reply: Message.nullable().openapi({ description: "The end's reply as it stands; null before it exists" }),
    question: Question.nullable().openapi({ description: "The question the end's reply asked, as it stands; null when it asked none" }),
    links: z.array(ChainLink).openapi({ description: "The chain from the submission asked about to its end, in order" }),
  })
  .openapi("Chain", {
    description:
      "The chain of a submission: it and every answer that followed a question its replies asked, each answer's task asking the next. " +
      "Answering a question (through any channel, or by a send or steer whose text answers it) continues the chain of the submission whose reply asked it.",
  });
export type Chain = z.infer<typeof Chain>;

/** One submission of a chain as a channel's task shows it: what was asked (the user message once its task started) and the reply it got. */
type ChainStep = { submission: SubmissionState; userMessage: Message | null; reply: Message | null };

/**
 * A chain read as a task (A2A's): the chain itself, whether its submission leads a task at all (a steering text a running
 * task took, or an answer, does not), its steps from the root, and when its state was entered (ms). `contextId`: the
 * chat's A2A context, as the client that made it sent it, else the chat's id.
 */
export type ChainAsTask = { chain: Chain; chatId: string; contextId: string; isTask: boolean; enteredAt: number; steps: ChainStep[] };
