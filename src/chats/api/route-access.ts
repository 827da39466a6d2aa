import type { Context } from "hono";
import type { GatedEnv } from "../../auth/gate";
import { ApiError, notFound } from "../../http/problem";
import { isUuid } from "../../ids";
import { authorise } from "../../projects/guards";
import type { NotHere } from "../room-calls";

/** Project access, then the chat's object; whether the chat is in that project is the object's answer. */
export async function chatInProject(c: Context<GatedEnv>, need: "read" | "write", params: { projectId: string; chatId: string }) {
  if (!isUuid(params.chatId)) throw notFound();
  const access = await authorise(c, need, params.projectId);
  return { access, chat: c.env.CHAT_ROOM.getByName(params.chatId) };
}

const chatNotFound = () => notFound("The chat does not exist in this project or is not available to you.");
export const messageNotFound = (detail = "This chat has no message with that id.") => new ApiError(404, "message_not_found", detail);
export const submissionNotFound = () => new ApiError(404, "submission_not_found", "This chat has no submission with that id.");
export const questionNotFound = () => new ApiError(404, "question_not_found", "This chat has no question with that id.");

/** The object's answer, or 404 when it said the chat is not in this project: the one place that answer is mapped. */
export function found<T extends { kind: string }>(outcome: T): Exclude<T, NotHere> {
  if (outcome.kind === "not_found") throw chatNotFound();
  return outcome as Exclude<T, NotHere>;
}
