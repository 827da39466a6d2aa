import { afterEach, expect } from "vitest";

// Requests a test's fake of the network did not plan for: any such request fails the test that made it.
const unplanned: string[] = [];

/**
 * What a network fake answers for a host it does not play: nothing reaches the real network from a
 * test, and the URL is kept, so the test that made the request fails (checked after each test).
 */
export function unplannedHost(input: RequestInfo | URL): Promise<Response> {
  const url = input instanceof Request ? input.url : String(input);
  unplanned.push(url);
  return Promise.reject(new TypeError(`a test fetched ${url}, which no fake of the network plays`));
}

afterEach(() => {
  const seen = unplanned.splice(0);
  expect(seen, "requests to hosts no fake plays").toEqual([]);
});
