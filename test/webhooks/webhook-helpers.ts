import { vi } from "vitest";
import { call, type World } from "../helpers";

export const hooksPath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/webhooks`;
export const register = (w: World, url: string, extra: Record<string, unknown> = {}, token = w.token) => call("POST", hooksPath(w), { token, body: { url, ...extra } });

export type Received = { url: string; headers: Record<string, string>; body: string; redirect: string; timed: boolean };
const realFetch = globalThis.fetch;

/** Receivers at https://receiver.test/: answer() decides each attempt's response (200 by default); other fetches pass through. */
export function fakeReceiver(answer: (got: Received, index: number) => Response | Promise<Response> = () => new Response("ok")) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://receiver.test/")) return realFetch(input as RequestInfo, init);
    const got = {
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
      redirect: request.redirect,
      timed: init?.signal instanceof AbortSignal,
    };
    const index = received.push(got) - 1;
    return answer(got, index);
  });
  return received;
}
