import { describe, expect, it } from "vitest";
import type { StreamGrant } from "../../src/chats/room/listeners";
import { ChatStreams } from "../../src/chats/room/streams";
import type { Env } from "../../src/env";

const grant = (leaseId: string): StreamGrant => ({ gateName: "token", leaseId, accountId: "account", projectId: "project" });
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A chat's streams over a stand-in TokenGate that records each call (a renewal when made, "renewed" when it
 * answers, which a test may hold back) and a D1 that cannot be read (access then stands, as in an outage).
 */
function streamsOverGate() {
  const calls: string[] = [];
  let valid = true;
  let held: Promise<void> | undefined;
  const gate = {
    async renewStreams(_name: string, leaseIds: string[]) {
      calls.push(`renew ${leaseIds.join(",")}`);
      await held;
      calls.push(`renewed ${leaseIds.join(",")}`);
      return valid;
    },
    async closeStream(leaseId: string) {
      calls.push(`close ${leaseId}`);
    },
  };
  const env = { TOKEN_GATE: { getByName: () => gate }, DB: {} } as unknown as Env;
  const ctx = { waitUntil: (promise: Promise<unknown>) => void promise.catch(() => undefined) } as unknown as DurableObjectState;
  const streams = new ChatStreams(ctx, env, { framesAfter: (cursor) => ({ frames: [], last: cursor }) });
  const open = (leaseId: string) => {
    const reader = streams.open(0, [], grant(leaseId), Date.now()).getReader();
    // A read waiting: the runtime asks for more, so a keep-alive is due at each beat.
    return { reader, next: reader.read() };
  };
  return {
    streams,
    calls,
    open,
    revoke: () => void (valid = false),
    holdRenewals: () => {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return release;
    },
  };
}

describe("a chat's stream timer", () => {
  it("writes a keep-alive alone at every other beat, and renews leases and checks access at the beats between", async () => {
    const { streams, calls, open, revoke } = streamsOverGate();
    const stream = open("a");
    revoke();
    await streams.beat();
    expect(new TextDecoder().decode((await stream.next).value)).toContain("keep-alive");
    expect(calls, "a keep-alive alone calls nothing").toEqual([]);
    expect(streams.size).toBe(1);
    await streams.beat();
    expect(calls.slice(0, 2)).toEqual(["renew a", "renewed a"]);
    expect(streams.size, "the pulse found the revocation").toBe(0);
  });

  it("ends only the stream whose client hung up, and frees its place once", async () => {
    const { streams, calls, open, revoke } = streamsOverGate();
    open("a");
    open("b");
    streams.hungUp("a");
    streams.hungUp("a");
    await tick();
    expect(streams.size).toBe(1);
    expect(calls).toEqual(["close a"]);
    revoke();
    await streams.pulse();
  });

  it("releases again, after the renewal, a stream that hung up while its lease was being renewed", async () => {
    const { streams, calls, open, holdRenewals } = streamsOverGate();
    open("a");
    const answer = holdRenewals();
    const pulsing = streams.pulse();
    await tick();
    streams.hungUp("a");
    await tick();
    answer();
    await pulsing;
    await tick();
    // The renewal could reach the gate after the first release and hold the place again: the second release follows it.
    expect(calls).toEqual(["renew a", "close a", "renewed a", "close a"]);
  });
});
