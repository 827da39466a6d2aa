import type { z } from "@hono/zod-openapi";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { CallV1, OpenV1Stream, V1Access, V1Answer } from "../channels/v1-call";

/**
 * What a tool may use while it runs: /v1 in-process for its caller (calls, streams, whether the caller
 * is still admitted), the client's cancellation or hang-up, and progress when the client asked for it.
 */
export type ToolContext = {
  v1: CallV1;
  open: OpenV1Stream;
  stillAdmitted: V1Access["stillAdmitted"];
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
  run(args: unknown, context: ToolContext): Promise<V1Answer>;
};

/** A /v1 problem (its problem+json text) as a tool's error result: the one text item, no structuredContent (the output schema describes success). */
export const toolError = (problem: string): CallToolResult => ({ content: [{ type: "text", text: problem }], isError: true });
