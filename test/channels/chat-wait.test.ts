import { describe, expect, it } from "vitest";
import type { FollowedEvent } from "../../src/channels/chat-follower";
import { waitOnChat } from "../../src/channels/chat-wait";
import type { Served } from "../../src/chats/service/chat-service";
import { ApiError } from "../../src/http/problem";

type State = { step: number };
const served = <T>(body: T): Served<T> => ({ ok: true, body, replayed: false });
const event = (id: number, type: string, data = "{}"): FollowedEvent => ({ id, type, data });

/** A follower that hands out the given events, then waits until the wait's signal fires (a quiet stream); it records its close. */
function followerOf(events: FollowedEvent[]) {
  const state = { closed: false, asked: 0 };
  return {
    state,
    next: async (stop: AbortSignal) => {
      state.asked++;
      const next = events.shift();
      if (next) return next;
      if (!stop.aborted) await new Promise((resolve) => stop.addEventListener("abort", resolve, { once: true }));
      return null;
    },
    close: () => {
      state.closed = true;
    },
  };
}

/** A read that counts itself and answers the step the "chat" has reached. */
function reader(steps: number[]) {
  let reads = 0;
  return {
    reads: () => reads,
    read: async () => served<State>({ step: steps[Math.min(reads++, steps.length - 1)]! }),
  };
}

const bounds = (stop = new AbortController(), hungUp = new AbortController(), admitted: Served<null> = served(null)) => ({
  stop: stop.signal,
  hungUp: hungUp.signal,
  stillAdmitted: async () => admitted,
});

describe("the one wait on a chat's events", () => {
  it("answers at once, reading once, what has settled already; the follower is closed", async () => {
    const follower = followerOf([event(1, "message")]);
    const { read, reads } = reader([3]);
    const waited = await waitOnChat(follower, bounds(), { read, settled: (s: State) => s.step === 3, moves: () => true });
    expect(waited).toEqual(served({ step: 3 }));
    expect(reads()).toBe(1);
    expect(follower.state).toEqual({ closed: true, asked: 0 });
  });

  it("reads again only after an event that may move what it waits on, and shows the others as they pass", async () => {
    const follower = followerOf([event(1, "message.delta"), event(2, "message.delta"), event(3, "queue.removed"), event(4, "message.delta"), event(5, "message")]);
    const { read, reads } = reader([1, 2, 3]);
    const passed: number[] = [];
    const waited = await waitOnChat(follower, bounds(), {
      read,
      settled: (s: State) => s.step === 3,
      moves: (e) => e.type !== "message.delta",
      passing: async (e) => {
        passed.push(e.id);
        return undefined;
      },
    });
    expect(waited).toEqual(served({ step: 3 }));
    expect(reads()).toBe(3);
    expect(passed).toEqual([1, 2, 4]);
    expect(follower.state.closed).toBe(true);
  });

  it("reads what it waits on as it stands once its time is up, after asking whether the caller is still admitted", async () => {
    const stop = new AbortController();
    const follower = followerOf([]);
    const { read, reads } = reader([1, 2]);
    let asked = 0;
    const waiting = waitOnChat(
      follower,
      {
        ...bounds(stop),
        stillAdmitted: async () => {
          asked++;
          return served(null);
        },
      },
      { read, settled: (s: State) => s.step === 3, moves: () => true },
    );
    stop.abort();
    expect(await waiting).toEqual(served({ step: 2 }));
    expect([reads(), asked]).toEqual([2, 1]);
  });

  it("answers the caller's refusal when it is no longer admitted, and nothing it read", async () => {
    const stop = new AbortController();
    const gone = new ApiError(401, "unauthorized", "The API token was revoked or has expired.");
    const waiting = waitOnChat(followerOf([]), bounds(stop, new AbortController(), { ok: false, problem: gone }), {
      read: reader([1]).read,
      settled: () => false,
      moves: () => true,
    });
    stop.abort();
    expect(await waiting).toEqual({ ok: false, problem: gone });
  });

  it("answers what it last read, unchecked, when the caller hung up: nobody reads the answer", async () => {
    const stop = new AbortController();
    const hungUp = new AbortController();
    let asked = 0;
    const { read, reads } = reader([1, 2]);
    const waiting = waitOnChat(
      followerOf([]),
      {
        stop: stop.signal,
        hungUp: hungUp.signal,
        stillAdmitted: async () => {
          asked++;
          return served(null);
        },
      },
      {
        read,
        settled: () => false,
        moves: () => true,
      },
    );
    hungUp.abort();
    stop.abort();
    expect(await waiting).toEqual(served({ step: 1 }));
    expect([reads(), asked]).toEqual([1, 0]);
  });

  it("ends with the channel's own answer when a passing event says so, the follower closed", async () => {
    const follower = followerOf([event(0, "answer-refused", "q problem")]);
    const waited = await waitOnChat<State, string>(follower, bounds(), {
      read: reader([1]).read,
      settled: () => false,
      moves: () => false,
      passing: async (e) => ({ end: e.data }),
    });
    expect(waited).toBe("q problem");
    expect(follower.state.closed).toBe(true);
  });

  it("stops waiting when the server ends the stream, and reads again as it stands", async () => {
    const { read, reads } = reader([1, 5]);
    const ended = { state: { closed: false }, next: async () => null, close: () => undefined };
    const waited = await waitOnChat(ended, bounds(), { read, settled: (s: State) => s.step === 3, moves: () => true });
    expect(waited).toEqual(served({ step: 5 }));
    expect(reads()).toBe(2);
  });
});
