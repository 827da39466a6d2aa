import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Chain } from "../chats/chain-schemas";
import type { Question } from "../chats/question-schemas";
import type { Message, Submission, SubmissionState } from "../chats/schemas";
import { askable, type Modes } from "./elicitation";
import { readOutcome } from "./reply-wait";
import { type ToolContext, toolError } from "./tool-context";
import type { ChatService, Served } from "../chats/service/chat-service";
import { parsed } from "../chats/service/parsed";

// A call follows at most this many questions; the next one ends its view, as a question it cannot be asked does.
const QUESTIONS_PER_CALL = 10;
const QUEUED = "Queued: the agent starts on it after the work before it.";
const WORKING = "The agent is working on it.";

/** What a call's submission started, as an MCP client is told of it. */
export type ChainView =
  | { status: "working"; message: string }
  | { status: "input_required"; question: Question }
  | { status: "completed"; result: CallToolResult }
  | { status: "cancelled" };

/** The call's own submission as its result names it (answer_question's names the question it answered), and whether its key replayed an earlier call. */
export type OwnSubmission = Submission & { questionId?: string; replayed?: true };
type Answered = { questionId: string; submissionId: string };
type ChainRef = { projectId: string; chatId: string; own: OwnSubmission };

const success = (structured: Record<string, unknown>): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured });

/** The chain of the call's submission, one call to the chat's object. */
export async function readChain({ projectId, chatId, own }: ChainRef, chats: ChatService): Promise<Served<Chain>> {
  return parsed(await chats.chain({ projectId, chatId }, own.submissionId));
}

/**
 * The chain as MCP sees it from the call's submission: it goes on past the questions the caller could be asked
 * (its modes admit their kind; at most QUESTIONS_PER_CALL), and a question it could not be asked ends the view
 * there, complete, with that question in the result.
 */
export async function viewChain(ref: ChainRef, chain: Chain, modes: Modes, context: Pick<ToolContext, "chats">): Promise<Served<ChainView>> {
  const answered: Answered[] = [];
  const ok = (view: ChainView): Served<ChainView> => ({ ok: true, body: view, replayed: false });
  const { links } = chain;
  for (let i = 0; i < links.length - 1; i++) {
    const { questionId, questionKind } = links[i]!;
    if (questionId === null || questionKind === null) continue;
    if (askable(questionKind, modes) && answered.length < QUESTIONS_PER_CALL) {
      answered.push({ questionId, submissionId: links[i + 1]!.submissionId });
      continue;
    }
    // Answered elsewhere, past where this caller could follow: the view ends at the submission that asked.
    const outcome = await readOutcome(ref, links[i]!.submissionId, context);
    if (!outcome.ok) return outcome;
    const question = parsed(await context.chats.question(ref, questionId));
    if (!question.ok) return question;
    return ok({ status: "completed", result: completed(ref.own, outcome.body.state, outcome.body.reply, answered, question.body) });
  }
  switch (chain.state) {
    case "queued":
      return ok({ status: "working", message: QUEUED });
    case "working":
      return ok({ status: "working", message: WORKING });
    case "cancelled":
      return ok({ status: "cancelled" });
    case "refused":
      return ok({ status: "completed", result: ended(chain.end.failure?.code ?? "insufficient_credits", chain) });
    case "failed":
      return ok({ status: "completed", result: ended("agent_failed", chain) });
    case "awaiting":
      if (chain.question && askable(chain.question.kind, modes) && answered.length < QUESTIONS_PER_CALL) return ok({ status: "input_required", question: chain.question });
  }
  return ok({ status: "completed", result: standing(ref.own, chain, answered) });
}

/** The questions the view went on past: each link's question, answered by the next link, up to where the view ends. */
function answeredIn(chain: Chain): Answered[] {
  const answered: Answered[] = [];
  for (let i = 0; i < chain.links.length - 1; i++) {
    const { questionId } = chain.links[i]!;
    if (questionId !== null) answered.push({ questionId, submissionId: chain.links[i + 1]!.submissionId });
  }
  return answered.slice(0, QUESTIONS_PER_CALL);
}

/** The call's result as the chain now stands, its end's state and reply (a wait that ended first, or a caller that stops asking). */
export function standing(own: OwnSubmission, chain: Chain, answered: Answered[] = answeredIn(chain)): CallToolResult {
  return completed(own, chain.end, chain.reply, answered, chain.question);
}

/** What the creating tool would answer after a wait ending now. */
function completed(own: OwnSubmission, state: SubmissionState, reply: Message | null, answered: Answered[], question: Question | null): CallToolResult {
  const { replayed, ...submission } = own;
  return success({ submission, state, reply, answered, ...(replayed ? { replayed } : {}), question });
}

/** A chain that ended without a reply to show: the agent failed, or its last submission could not start. */
function ended(code: string, chain: Chain): CallToolResult {
  const detail = code === "agent_failed" ? "The agent's reply failed." : (chain.end.failure?.message ?? "The submission could not start.");
  return toolError(JSON.stringify({ code, detail, state: chain.end, reply: chain.reply }));
}

/** The call's own submission from the send's answer, marked when its key replayed an earlier call. */
export const ownSubmission = (sent: { body: unknown; replayed: boolean }): OwnSubmission => ({
  ...(sent.body as Submission & { questionId?: string }),
  ...(sent.replayed ? { replayed: true as const } : {}),
});
