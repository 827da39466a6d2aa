import type { Context } from "hono";
import { requireScope, type GatedEnv } from "../../auth/gate";
import { ApiError, notFound } from "../../http/problem";
import { problems } from "../../http/router";
import { projectAccess } from "../../projects/access";
import { UUID_PATTERN } from "../../ids";

// What every chat operation shares: the bearer scheme, the scope guards and the problems it can answer.
export const security = [{ userApiTokenBearer: [] }];
export const read = [requireScope("chat:read")];
export const write = [requireScope("chat:write")];
export const chatProblems = problems(400, 401, 403, 404, 429);

/** The caller's access to the project: 404 when unknown, not a member or suspended (or a malformed id); 403 for a viewer writing. */
export async function authorise(c: Context<GatedEnv>, need: "read" | "write", projectId: string) {
  const access = UUID_PATTERN.test(projectId) ? await projectAccess(c.env.DB, projectId.toLowerCase(), c.get("caller").accountId) : null;
  if (!access) throw notFound("The project does not exist or is not available to you.");
  if (need === "write" && access.role === "viewer") throw new ApiError(403, "forbidden", "Viewers of this project can read chats but not change them.");
  return access;
}

/** Project access, then the chat's object; whether the chat is in that project is the object's answer. */
export async function chatInProject(c: Context<GatedEnv>, need: "read" | "write", params: { projectId: string; chatId: string }) {
  if (!UUID_PATTERN.test(params.chatId)) throw notFound();
  const access = await authorise(c, need, params.projectId);
  return { access, chat: c.env.CHAT_ROOM.getByName(params.chatId.toLowerCase()) };
}

export const chatNotFound = () => notFound("The chat does not exist in this project or is not available to you.");
export const messageNotFound = (detail = "This chat has no message with that id.") => new ApiError(404, "message_not_found", detail);
export const submissionNotFound = () => new ApiError(404, "submission_not_found", "This chat has no submission with that id.");
export const questionNotFound = () => new ApiError(404, "question_not_found", "This chat has no question with that id.");

/** The object's answer, or 404 when it said the chat is not in this project. */
export function found<T>(value: T | null): T {
  if (value === null) throw chatNotFound();
  return value;
}
