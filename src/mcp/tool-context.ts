import type { z } from "@hono/zod-openapi";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { ChatService, Served } from "../chats/service/chat-service";
import { type ApiError, problemBody } from "../http/problem";

/**
 * What a tool may use while it runs: the chat service for its caller, the request's id (a problem's instance), the
 * client's cancellation or hang-up, and progress when the client asked for it.
 */
export type ToolContext = {
  chats: ChatService;
  requestId: string;
  signal: AbortSignal;
  progress: ((update: { progress: number; message: string }) => Promise<void>) | null;
  /** The call answers a task (the Tasks extension): a send answers once its submission is stored, without waiting or reading on. */
  asTask?: boolean;
};

export type Tool = {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  annotations: ToolAnnotations;
  run(args: unknown, context: ToolContext): Promise<Served<unknown>>;
};

/** A tool's error result: the one text item, no structuredContent (the output schema describes success). */
export const toolError = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/** A refusal as a tool's error result: the problem+json body /v1 would send. */
export const problemResult = (problem: ApiError, requestId: string): CallToolResult => toolError(JSON.stringify(problemBody(problem, requestId)));
