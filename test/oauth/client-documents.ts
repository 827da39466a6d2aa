import { vi } from "vitest";
import { call } from "../helpers";

const LIBRARY_AGENT = "workers-oauth-provider/";

/**
 * Plays the network for Client ID Metadata Document lookups: `answer` serves each URL the service
 * fetches, and the list records them. The OAuth library's own requests still meet the Worker's
 * outbound rules (they never reach `answer`), as in production.
 */
export async function fakeDocuments(answer: (url: string, init: RequestInit | undefined) => Response | Promise<Response>): Promise<string[]> {
  // One OAuth request first, so the Worker's fetch is in place before it is faked around.
  await call("GET", "/.well-known/oauth-authorization-server");
  const governed = globalThis.fetch;
  const fetched: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new Headers(input instanceof Request ? input.headers : init?.headers).get("user-agent")?.startsWith(LIBRARY_AGENT)) return governed(input, init);
    fetched.push(url);
    return answer(url, init);
  });
  return fetched;
}
