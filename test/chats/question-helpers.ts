import { expect } from "vitest";
import { Question } from "../../src/chats/question-schemas";
import { Chat } from "../../src/chats/schemas";
import { type Clock, settle } from "../clock";
import { call, chatsPath, room, send, type World } from "../helpers";

/** The calls of the questions issue, as a client makes them. */
export const questionPath = (w: World, chatId: string, questionId: string) => `${chatsPath(w)}/${chatId}/questions/${questionId}`;
export const getQuestion = (w: World, chatId: string, questionId: string, token = w.token) => call("GET", questionPath(w, chatId, questionId), { token });
export const answer = (w: World, chatId: string, questionId: string, body: unknown, key: string = crypto.randomUUID(), token = w.token) =>
  call("POST", `${questionPath(w, chatId, questionId)}/answer`, { token, headers: { "idempotency-key": key }, body });

/** The question as GET shows it, parsed with the schema that describes it. */
export async function questionOf(w: World, chatId: string, questionId: string) {
  const r = await getQuestion(w, chatId, questionId);
  expect(r.status, r.text).toBe(200);
  return Question.parse(r.json);
}

/** The chat as GET shows it. */
export const chatNow = async (w: World, chatId: string) => Chat.parse((await call("GET", `${chatsPath(w)}/${chatId}`, { token: w.token })).json);

/** Sends a message that makes the built-in agent ask, runs its task to the end, and returns the pending question. */
export async function ask(w: World, chatId: string, clock: Clock, content: string) {
  const sent = await send(w, chatId, content);
  expect(sent.status, sent.text).toBe(202);
  await settle(room(chatId), clock);
  const chat = await chatNow(w, chatId);
  expect(chat.pendingQuestionId, "a question is pending").not.toBeNull();
  return { question: await questionOf(w, chatId, chat.pendingQuestionId!), submissionId: sent.json.submissionId as string };
}
