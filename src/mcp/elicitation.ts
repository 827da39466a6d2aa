import { nameUuid } from "../ids";
import { Answer } from "../agent/question-shapes";
import type { Question } from "../chats/question-schemas";
import type { ChatRef, ChatService } from "../chats/service/chat-service";
import { type ApiError, invalidPart, problemBody } from "../http/problem";

/** The elicitation modes a client declared: `elicitation: {}` is form; `{ form?, url? }` names them. */
export type Modes = { form: boolean; url: boolean };
export const NO_MODES: Modes = { form: false, url: false };

export function modesOf(capabilities: unknown): Modes {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  if (typeof elicitation !== "object" || elicitation === null) return NO_MODES;
  const named = elicitation as { form?: unknown; url?: unknown };
  if (named.form === undefined && named.url === undefined) return { form: true, url: false };
  return { form: named.form !== undefined, url: named.url !== undefined };
}

/** Whether a client with these modes can be asked this kind: a form for text, choice and approval; a url for a connection. */
export const askable = (kind: Question["kind"], modes: Modes) => (kind === "connection" ? modes.url : modes.form);

const TEXT_MAX = 100_000;
const REASON_MAX = 2000;

/**
 * `elicitation/create`'s params for a question: a form of exactly the contract's schema, or url mode for a connection
 * (with the question's id as `elicitationId` on 2025-11-25; 2026-07-28 names it by the inputRequests key instead).
 */
export function elicitationParams(question: Question, withElicitationId = false): Record<string, unknown> {
  if (question.kind === "connection") return { mode: "url", message: question.prompt, url: question.url, ...(withElicitationId ? { elicitationId: question.id } : {}) };
  return { mode: "form", message: messageOf(question), requestedSchema: formOf(question) };
}

const messageOf = (q: Question) => (q.kind === "approval" && q.action ? `${q.prompt}\n\nAction: ${q.action.name}: ${q.action.summary}` : q.prompt);

function formOf(q: Question): Record<string, unknown> {
  if (q.kind === "text") {
    return { type: "object", properties: { text: { type: "string", title: "Answer", minLength: 1, maxLength: TEXT_MAX } }, required: ["text"] };
  }
  if (q.kind === "approval") {
    const decision = {
      type: "string",
      title: "Decision",
      oneOf: [
        { const: "approve", title: "Approve" },
        { const: "deny", title: "Deny" },
      ],
    };
    return { type: "object", properties: { decision, reason: { type: "string", title: "Reason", maxLength: REASON_MAX } }, required: ["decision"] };
  }
  const options = (q.options ?? []).map((o) => ({ const: o.id, title: o.label }));
  const pick = q.multiSelect
    ? { choices: { type: "array", title: "Choose", minItems: q.allowText ? 0 : 1, maxItems: options.length, items: { anyOf: options } } }
    : { choice: { type: "string", title: "Choose", oneOf: options } };
  const text = q.allowText ? { text: { type: "string", title: "Or write an answer", maxLength: TEXT_MAX } } : {};
  return { type: "object", properties: { ...pick, ...text }, ...(q.allowText ? {} : { required: [q.multiSelect ? "choices" : "choice"] }) };
}

/** An ElicitResult as the client sent it. */
type ElicitResult = { action?: unknown; content?: unknown };

/**
 * What an ElicitResult becomes: an answer body for POST …/answer, `cancel` (no answer: the question stays pending),
 * or content that does not fit the question (not an answer; the REST call would refuse it the same way).
 */
type Mapped = { kind: "answer"; answer: Answer } | { kind: "cancel" } | { kind: "unfit"; why: string };

export function answerOf(question: Question, result: unknown): Mapped {
  const { action, content } = (typeof result === "object" && result !== null ? result : {}) as ElicitResult;
  if (action === "cancel") return { kind: "cancel" };
  if (action === "decline") return { kind: "answer", answer: { decline: true } };
  if (action !== "accept") return { kind: "unfit", why: "action must be accept, decline or cancel" };
  const fields = (typeof content === "object" && content !== null ? content : {}) as Record<string, unknown>;
  const text = typeof fields.text === "string" && fields.text !== "" ? fields.text : undefined;
  switch (question.kind) {
    case "connection":
      return { kind: "answer", answer: { connected: true } };
    case "text":
      return text === undefined ? { kind: "unfit", why: "text is required" } : { kind: "answer", answer: { text } };
    case "approval": {
      if (fields.decision !== "approve" && fields.decision !== "deny") return { kind: "unfit", why: "decision must be approve or deny" };
      const reason = typeof fields.reason === "string" && fields.reason !== "" ? fields.reason : undefined;
      return { kind: "answer", answer: { decision: fields.decision, ...(reason === undefined ? {} : { reason }) } };
    }
    case "choice": {
      // A form that allows a text may come back without picks.
      const picked = question.multiSelect ? (fields.choices ?? []) : fields.choice === undefined ? [] : [fields.choice];
      if (!Array.isArray(picked) || picked.some((id) => typeof id !== "string")) return { kind: "unfit", why: "choice must be option ids" };
      if (picked.length === 0 && text === undefined) return { kind: "unfit", why: "pick an option" };
      if (picked.length === 0) return { kind: "answer", answer: { text: text! } };
      return { kind: "answer", answer: { optionIds: picked as string[], ...(text === undefined ? {} : { text }) } };
    }
  }
}

// The namespace of the keys answers from elicitation are sent under: one key per question, whichever channel answers.
const ANSWER_KEY_NAMESPACE = "6f1c2a8e-3b4d-5e6f-8a9b-0c1d2e3f4a5b";

/** The idempotency key of an elicited answer: a name-based UUID of the question's id, so the first channel to answer wins. */
export const answerKeyOf = (questionId: string): Promise<string> => nameUuid(ANSWER_KEY_NAMESPACE, questionId);

/**
 * What an elicited response did to its question: answered (or another channel had answered first: the chain goes on
 * either way), left pending (`cancel`), not an answer (content that does not fit, or /v1 refused its shape), or
 * refused for the answer itself (credit limit, archived, queue full, role or scope lost).
 */
export type ResponseOutcome =
  | { kind: "answered" }
  | { kind: "cancelled" }
  | { kind: "unfit"; problem: Record<string, unknown> }
  | { kind: "refused"; problem: ReturnType<typeof problemBody>; text: string };

const NOT_AN_ANSWER = new Set(["answer_does_not_fit", "invalid_request"]);
const ANSWERED_ELSEWHERE = new Set(["question_not_pending", "idempotency_key_reused"]);

/** Sends an ElicitResult as the question's answer under the key derived from the question, so the first channel to answer wins. */
export async function answerFromResponse(chats: ChatService, chat: ChatRef, question: Question, response: unknown): Promise<ResponseOutcome> {
  const mapped = answerOf(question, response);
  if (mapped.kind === "cancel") return { kind: "cancelled" };
  if (mapped.kind === "unfit") return { kind: "unfit", problem: { code: "answer_does_not_fit", detail: mapped.why } };
  // Held to the schema an answer's body is held to on /v1.
  const parsed = Answer.safeParse(mapped.answer);
  const shown = (problem: ApiError) => problemBody(problem, chats.requestId);
  if (!parsed.success) return { kind: "unfit", problem: shown(invalidPart(parsed.error)) };
  const sent = await chats.submit(chat, { kind: "answer", idempotencyKey: await answerKeyOf(question.id), questionId: question.id, answer: parsed.data });
  if (sent.ok) return { kind: "answered" };
  const { code } = sent.problem;
  if (ANSWERED_ELSEWHERE.has(code)) return { kind: "answered" };
  const problem = shown(sent.problem);
  if (NOT_AN_ANSWER.has(code)) return { kind: "unfit", problem };
  return { kind: "refused", problem, text: JSON.stringify(problem) };
}
