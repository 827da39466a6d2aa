import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../../src/app";
import { answerOf, env } from "../helpers";

const app = createApp();

/**
 * A request as the network delivers a GET or HEAD that carries a body. Workers cannot build one
 * (the Request constructor refuses it), so a POST with the body stands in, reporting the method.
 */
export function carryingBody(method: string, url: string, body: string, headers: Record<string, string> = {}): Request {
  const request = new Request(url, { method: "POST", body, headers });
  return new Proxy(request, {
    get(target, property) {
      if (property === "method") return method;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Sends a request straight to the app, as the Worker's fetch handler would. */
export async function viaApp(request: Request, bindings: Record<string, unknown> = {}) {
  const ctx = createExecutionContext();
  const response = await app.fetch(request, { ...env, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  // An event stream does not end by itself: its headers are the answer.
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, text: "", json: undefined };
  }
  return answerOf(response);
}
