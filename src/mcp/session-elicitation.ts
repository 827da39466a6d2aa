import type { CallToolResult, JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Question } from "../chats/question-schemas";
import type { ChatFollower } from "../channels/chat-follower";
import { standing } from "./chain-view";
import { type ChainRef, waitError, waitOnChain } from "./chain-wait";
import type { ElicitingCall } from "./input-required";
import type { ToolContext } from "./tool-context";
import { answerFromResponse, elicitationParams, type Modes, modesOf, NO_MODES } from "./elicitation";
import type { Sealer } from "./sealing";
import type { ChatService } from "../chats/service/chat-service";
import { parsed } from "../chats/service/parsed";

/**
 * Elicitation on the 2025 revisions: `initialize` from a client that declared elicitation gets a sealed Mcp-Session-Id
 * carrying its modes; a waiting call of such a session sends `elicitation/create` on its event stream with a sealed id,
 * and the client's POSTed response answers the question in the chat's object, so nothing waits in memory.
 */

type Session = { v: string; m: Modes };
type RequestId = { p: string; c: string; q: string; exp: number };

// Url mode exists from 2025-11-25 on.
const URL_MODE_SINCE = "2025-11-25";

/** The session id an `initialize` answers: for a client that declared elicitation, its modes sealed; otherwise none, as before. */
export async function sessionFor(sealer: Sealer, principal: string, revision: string, capabilities: unknown): Promise<string | undefined> {
  const declared = modesOf(capabilities);
  const modes = { form: declared.form, url: declared.url && revision >= URL_MODE_SINCE };
  if (!modes.form && !modes.url) return undefined;
  return sealer.seal("session", principal, { v: revision, m: modes } satisfies Session);
}

/** The modes a request's Mcp-Session-Id carries; none for a missing one, or one that does not verify (served without elicitation, never 404). */
export async function sessionModes(sealer: Sealer, principal: string, header: string | null): Promise<Modes> {
  if (header === null) return NO_MODES;
  return (await sealer.open<Session>("session", principal, header))?.m ?? NO_MODES;
}

/** The `elicitation/create` request for a question, its id sealed so that only this principal's response, in time, answers it. */
async function elicitationRequest(sealer: Sealer, principal: string, ref: ChainRef, question: Question, modes: Modes): Promise<JSONRPCRequest> {
  const id = await sealer.seal("elicitation", principal, { p: ref.projectId, c: ref.chatId, q: question.id, exp: Date.now() + sealer.inputTtlMs } satisfies RequestId);
  return { jsonrpc: "2.0", id, method: "elicitation/create", params: elicitationParams(question, modes.url) };
}

/** Whether a POSTed message is a JSON-RPC response (a result or an error), which only this server's own requests may get. */
export const isResponse = (message: JSONRPCMessage) => !("method" in message) && "id" in message && ("result" in message || "error" in message);

/**
 * A client's response to an `elicitation/create` this server sent: false when its id does not verify for this
 * principal or has expired. Otherwise a result answers the question (when it is still pending; a repeated or late
 * response, or an error, changes nothing).
 */
export async function takeResponse(sealer: Sealer, principal: string, message: JSONRPCMessage, chats: ChatService, tell: TellRefusal): Promise<boolean> {
  const request = await sealer.open<RequestId>("elicitation", principal, (message as { id?: unknown }).id);
  if (!request || Date.now() > request.exp) return false;
  if (!("result" in message)) return true;
  const chat = { projectId: request.p, chatId: request.c };
  const question = parsed(await chats.question(chat, request.q));
  if (!question.ok || question.body.status !== "pending") return true;
  const outcome = await answerFromResponse(chats, chat, question.body, message.result);
  // Refused for the answer itself: the call that asked (its credential's stream on the chat) ends with the problem.
  if (outcome.kind === "refused") await tell({ projectId: request.p, chatId: request.c, questionId: request.q }, outcome.text);
  return true;
}

/** Tells a credential's own streams on a chat that an answer it sent from a form was refused. */
export type TellRefusal = (question: { projectId: string; chatId: string; questionId: string }, problem: string) => Promise<void>;

/**
 * A 2025 session's waiting call: each question its chain reaches goes out once as `elicitation/create` on the call's
 * stream, and the wait goes on (the response lands in the chat, from whichever request carries it); it answers the
 * result, or the chain as it stands when the wait ends.
 */
export async function waitAsking(
  call: ElicitingCall,
  ref: ChainRef,
  follower: ChatFollower,
  context: ToolContext,
  send: (request: JSONRPCRequest) => Promise<void> | undefined,
): Promise<CallToolResult> {
  const asked = new Set<string>();
  const waited = await waitOnChain(ref, follower, call.waitMs, call.modes, context, async (question) => {
    if (!asked.has(question.id)) {
      asked.add(question.id);
      await send(await elicitationRequest(call.sealer, call.principal, ref, question, call.modes));
    }
    return "wait";
  });
  if (!waited.ok) return waitError(waited, context.requestId);
  return waited.body.view.status === "completed" ? waited.body.view.result : standing(ref.own, waited.body.chain);
}
