import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, McpError, type ServerNotification, type ServerRequest, type ServerResult } from "@modelcontextprotocol/sdk/types.js";
import type { Methods } from "./methods";

/**
 * The server of a call answered as an event stream, on the SDK's Protocol: it frames the call's progress and the
 * server's requests to the client on that stream. The SDK's Server adds only what this one does not use (client
 * requests, logging, elicitation), at the price of bundling Ajv (about 43 KB of gzip, constructed even when unused).
 */
export class StreamServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  constructor(methods: Methods, hangUp: AbortSignal) {
    super();
    methods.onProtocol(this, hangUp);
  }

  // This server sends no requests of its own but through a call's sendRequest, and runs nothing as a task; notifications are progress only.
  protected assertCapabilityForMethod(method: string): void {
    throw new Error(`This server does not send ${method} requests.`);
  }
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(method: string): void {
    throw new Error(`This server does not send ${method} requests as tasks.`);
  }
  protected assertTaskHandlerCapability(): void {
    throw new McpError(ErrorCode.InvalidRequest, "This server does not run requests as tasks.");
  }
}
