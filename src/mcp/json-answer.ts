import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The transport of a message answered with one JSON body (or 202 for a notification). The route has checked the
 * request and parsed the message already; the SDK's Streamable HTTP transport would check them again and parse the
 * message three more times, keeping maps for batches this endpoint refuses. A call that may stream keeps the SDK's.
 */
export class JsonAnswer implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #answer!: (response: Response) => void;
  readonly #answered = new Promise<Response>((resolve) => {
    this.#answer = resolve;
  });

  async start(): Promise<void> {}

  // Only the call's response is sent: there is no stream here for a notification or a request to the client.
  async send(message: JSONRPCMessage): Promise<void> {
    if ("result" in message || "error" in message) this.#answer(Response.json(message));
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** The message handed to the server; its response once the server sends it (a notification is accepted, 202). */
  answer(message: JSONRPCMessage): Promise<Response> {
    this.onmessage?.(message);
    return "id" in message ? this.#answered : Promise.resolve(new Response(null, { status: 202 }));
  }
}
