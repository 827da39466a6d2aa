import { z } from "@hono/zod-openapi";
import { UUID_PATTERN } from "../ids";

/** An id argument: a UUID, checked before any call is made, so no other text can reach a /v1 path (the route would only answer 404 for it). */
export const idArgument = (description: string) => z.string().regex(UUID_PATTERN, { message: "must be a UUID" }).openapi({ format: "uuid", description });

// Arguments are the route's path parameters, body fields and headers under one object; an unknown argument is named back, as /v1 names unknown fields.
export const inProject = z.strictObject({ projectId: idArgument("The project's id, from list_projects") });
export const inChat = inProject.extend({ chatId: idArgument("The chat's id, from list_chats or create_chat") });
