import { z } from "@hono/zod-openapi";
import { parseWithCompat } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import type { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from "@modelcontextprotocol/sdk/types.js";

/** What a handler may use of its call: the request's id, its signal (the client's cancellation or hang-up), and what goes back to the client on the call's event stream. */
export type CallExtra = {
  requestId: RequestId;
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(notification: ServerNotification): Promise<void>;
  /** A request of the server's own to the client (a 2025 session's elicitation/create), sent on this call's stream. */
  sendRequest(request: JSONRPCRequest): Promise<void>;
};

type Handler = (request: never, extra: CallExtra) => ServerResult | Promise<ServerResult>;
// No schema: the handler takes the request as the message check passed it.
type Entry = { schema: z.ZodType | undefined; handle: Handler };

// Nothing goes back before the answer of a call answered with one JSON body: there is no stream to carry it.
const NO_STREAM = async () => {};

/**
 * The JSON-RPC methods this server answers for one HTTP request, each with the schema its request is parsed by. A call
 * answered with one JSON body is answered here; one answered as an event stream goes through the SDK's Protocol (`onProtocol`),
 * which frames its progress and its requests to the client. Both frame a response and an error alike.
 */
export class Methods {
  readonly #entries = new Map<string, Entry>();

  on<S extends z.ZodType<{ method: string }>>(
    method: z.output<S>["method"],
    schema: S,
    handle: (request: z.output<S>, extra: CallExtra) => ServerResult | Promise<ServerResult>,
  ): void {
    this.#entries.set(method, { schema, handle: handle as Handler });
  }

  /** A method whose handler reads the request as sent (params an object, if any): a zod parse costs tens of µs in workerd, which cannot compile its fast path. */
  onRequest(method: string, handle: (request: JSONRPCRequest, extra: CallExtra) => ServerResult | Promise<ServerResult>): void {
    this.#entries.set(method, { schema: undefined, handle: handle as Handler });
  }

  /**
   * The answer to a message that answers with one JSON body: its response (200), or 202 for a notification (this
   * stateless server acts on none). `hangUp` is the call's signal: only the client's going away ends it, since a
   * notifications/cancelled is a request of its own, to another server.
   */
  async answer(message: JSONRPCMessage, hangUp: AbortSignal): Promise<Response> {
    if (!("id" in message) || !("method" in message)) return new Response(null, { status: 202 });
    return Response.json(await this.respond(message, hangUp));
  }

  /** A request's response, as the SDK's Protocol would make it. */
  private async respond(request: JSONRPCRequest, signal: AbortSignal) {
    const { id } = request;
    const entry = this.#entries.get(request.method);
    if (!entry) return { jsonrpc: "2.0", id, error: { code: ErrorCode.MethodNotFound, message: "Method not found" } };
    const extra: CallExtra = { requestId: id, signal, _meta: request.params?._meta as CallExtra["_meta"], sendNotification: NO_STREAM, sendRequest: NO_STREAM };
    try {
      const result = await entry.handle((entry.schema ? parseWithCompat(entry.schema, request) : request) as never, extra);
      return { result, jsonrpc: "2.0", id };
    } catch (error) {
      return { jsonrpc: "2.0", id, error: errorOf(error) };
    }
  }

  /** Each method on the SDK's Protocol, for a call answered as an event stream: its signal fires on the Protocol's cancellation or on `hangUp`. */
  onProtocol(server: Protocol<ServerRequest, ServerNotification, ServerResult>, hangUp: AbortSignal): void {
    for (const [method, { schema, handle }] of this.#entries) {
      // The Protocol finds a handler's method in its schema; this one keeps every member as it was sent.
      server.setRequestHandler((schema ?? z.looseObject({ method: z.literal(method) })) as never, (request: never, extra: Omit<CallExtra, "sendRequest">) =>
        handle(request, {
          ...extra,
          signal: AbortSignal.any([extra.signal, hangUp]),
          sendRequest: async (message) => server.transport?.send(message, { relatedRequestId: extra.requestId }),
        }),
      );
    }
  }
}

/** A handler's error as the SDK's Protocol frames it: its own integer code, or internal error (-32603). */
function errorOf(error: unknown) {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  return { code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError, message: message ?? "Internal error", ...(data !== undefined && { data }) };
}
