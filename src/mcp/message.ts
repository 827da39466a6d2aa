import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

const isId = (value: unknown) => typeof value === "string" || Number.isSafeInteger(value);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

// What the SDK's schema asks of params: an object whose _meta, if any, is an object with a string or integer progressToken, if any.
function plainParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (!isRecord(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  return isRecord(meta) && (meta.progressToken === undefined || isId(meta.progressToken)) && !("io.modelcontextprotocol/related-task" in meta);
}

/** A request or notification of the usual shape, every member as the schema accepts it: a subset of what it accepts. */
function plainCall(message: Record<string, unknown>): boolean {
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  if ("id" in message && !isId(message.id)) return false;
  for (const key in message) if (!REQUEST_KEYS.has(key)) return false;
  return plainParams(message.params);
}

/**
 * Whether an object is a JSON-RPC message as the SDK's JSONRPCMessageSchema defines one. The usual call is checked by
 * hand (the zod union of four strict objects costs about 0.05 ms); anything else, the schema decides.
 */
export const isJsonRpcMessage = (message: Record<string, unknown>): boolean => plainCall(message) || JSONRPCMessageSchema.safeParse(message).success;
