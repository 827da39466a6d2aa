import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { sha256Hex } from "../crypto";
import type { Question } from "../chats/question-schemas";
import { ChatFollower } from "../channels/chat-follower";
import { type ChainRef, type ChainWait, type RefusedAnswer, waitError, waitOnChain } from "./chain-wait";
import { type OwnSubmission, readChain, standing, viewChain } from "./chain-view";
import { answerFromResponse, elicitationParams, type Modes } from "./elicitation";
import type { Sealer } from "./sealing";
import { RpcError } from "./tasks";
import { problemResult, type ToolContext, toolError } from "./tool-context";
import type { Served } from "../chats/service/chat-service";

/**
 * Multi round-trip requests (2026-07-28): a waiting call whose chain reaches a question the client can be asked
 * answers `input_required` with a sealed requestState; the client shows its form and calls again with the state and
 * its responses, which answer the question (never sending the message again) and wait on.
 */

/** What a requestState carries, sealed for its principal: the chain's start, the question asked, the call it answers, and its expiry. */
type RequestState = { p: string; c: string; own: OwnSubmission; q: string; t: string; d: string; exp: number; m: Modes };

/** One eliciting call: its principal's sealer, the tool and arguments (the retry must repeat them), the modes and the wait. */
export type ElicitingCall = { sealer: Sealer; principal: string; tool: string; args: Record<string, unknown>; modes: Modes; waitMs: number };

type InputRequired = { resultType: "input_required"; inputRequests: Record<string, { method: "elicitation/create"; params: Record<string, unknown> }>; requestState: string };
export type ElicitingResult = CallToolResult | InputRequired;

const INVALID_PARAMS = -32602;
export const invalidState = () =>
  new RpcError(INVALID_PARAMS, "The requestState does not belong to this call; call again without it to send anew.", { reason: "request_state_invalid" });

/** JSON with its object keys sorted, so the same arguments always give the same digest. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
}
const digestOf = (args: unknown) => sha256Hex(canonical(args));

/** The call's answer for where its wait left the chain: a question to ask, the result, or the chain as it stands. */
async function answerFor(call: ElicitingCall, ref: ChainRef, waited: Served<ChainWait> | RefusedAnswer, requestId: string): Promise<ElicitingResult> {
  if (!waited.ok) return waitError(waited, requestId);
  const { view, chain } = waited.body;
  if (view.status === "input_required") return inputRequired(call, ref, view.question);
  if (view.status === "completed") return view.result;
  return standing(ref.own, chain);
}

async function inputRequired(call: ElicitingCall, ref: ChainRef, question: Question): Promise<InputRequired> {
  const state: RequestState = {
    p: ref.projectId,
    c: ref.chatId,
    own: ref.own,
    q: question.id,
    t: call.tool,
    d: await digestOf(call.args),
    exp: Date.now() + call.sealer.inputTtlMs,
    m: call.modes,
  };
  return {
    resultType: "input_required",
    inputRequests: { [question.id]: { method: "elicitation/create", params: elicitationParams(question) } },
    requestState: await call.sealer.seal("request-state", call.principal, state),
  };
}

/** The first call: its message was just sent (the follower opened before it); waits on the chain. */
export async function afterSend(call: ElicitingCall, ref: ChainRef, follower: ChatFollower, context: ToolContext): Promise<ElicitingResult> {
  return answerFor(call, ref, await waitOnChain(ref, follower, call.waitMs, call.modes, context), context.requestId);
}

/**
 * A retry with a requestState: verified first (forged, foreign, another tool, other arguments or another chat:
 * request_state_invalid; past its expiry: request_state_expired), it answers the question from its response and
 * waits again. A refused retry sends and answers nothing; no retry ever sends the message again.
 */
export async function retry(call: ElicitingCall, requestState: unknown, inputResponses: unknown, context: ToolContext): Promise<ElicitingResult> {
  const state = await call.sealer.open<RequestState>("request-state", call.principal, requestState);
  if (!state) throw invalidState();
  const { projectId, chatId } = call.args as { projectId?: unknown; chatId?: unknown };
  if (state.t !== call.tool || state.p !== projectId || state.c !== chatId || state.d !== (await digestOf(call.args))) throw invalidState();
  if (Date.now() > state.exp) throw new RpcError(INVALID_PARAMS, "The requestState has expired; call again without it.", { reason: "request_state_expired" });
  const ref: ChainRef = { projectId: state.p, chatId: state.c, own: state.own };
  // Followed before the answer goes in, so nothing it starts is missed; the wait holds a stream place as any wait does.
  const opened = await ChatFollower.open(context.chats, ref);
  const refused = (problem: Parameters<typeof problemResult>[0]) => problemResult(problem, context.requestId);
  if (!opened.ok) return refused(opened.problem);
  const follower = opened.body;
  try {
    const chain = await readChain(ref, context.chats);
    if (!chain.ok) return refused(chain.problem);
    const view = await viewChain(ref, chain.body, call.modes, context);
    if (!view.ok) return refused(view.problem);
    // A used state replayed finds its question answered: nothing is answered twice, and the chain is reported as it stands.
    if (view.body.status === "input_required" && view.body.question.id === state.q) {
      const question = view.body.question;
      const responses = typeof inputResponses === "object" && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
      if (!(question.id in responses)) return await inputRequired(call, ref, question);
      const outcome = await answerFromResponse(context.chats, ref, question, responses[question.id]);
      // The person dismissed the form: stop asking, and answer as a client that cannot be asked would.
      if (outcome.kind === "cancelled") return standing(ref.own, chain.body);
      if (outcome.kind === "unfit") return await inputRequired(call, ref, question);
      if (outcome.kind === "refused") return toolError(outcome.text);
    }
    return await answerFor(call, ref, await waitOnChain(ref, follower, call.waitMs, call.modes, context), context.requestId);
  } finally {
    follower.close();
  }
}
