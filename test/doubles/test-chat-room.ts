import type { AgentPort, LiveTask } from "../../src/agent/port";
import { ChatRoom } from "../../src/chats/room/chat-room";
import type { Env } from "../../src/env";
import { bindingsWithStandIns } from "./stand-ins";

/**
 * The chat object as the tests run it (bound as CHAT_ROOM in the test Worker): the service's own
 * class on bindings a test may stand in for (stand-ins.ts), plus what a test needs to drive or see of
 * it, through the parts a subclass is given.
 */
export class TestChatRoom extends ChatRoom {
  readonly #hungUp: string[] = [];
  #lastTask: LiveTask | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, bindingsWithStandIns(ctx, env));
  }

  protected override createAgent(): AgentPort {
    const agent = super.createAgent();
    return {
      ...agent,
      start: (task, now, live) => {
        this.#lastTask = live;
        return agent.start(task, now, live);
      },
    };
  }

  /** The conversation the last task started here was given before its own message, oldest first. */
  async earlierTurnsOfLastTask() {
    if (!this.#lastTask) throw new Error("no task was started in this object");
    return [...this.#lastTask.earlierTurns()].reverse();
  }

  /** The streams' pulse (every 5 s while any is open, a keep-alive alone between), at a chosen time. */
  async pulseListeners(now = Date.now()): Promise<void> {
    await this.streams.pulse(now);
  }

  /** The leases of the streams whose Worker said their client hung up, in order. */
  async hungUp(): Promise<string[]> {
    return [...this.#hungUp];
  }

  override async unfollow(leaseId: string): Promise<void> {
    this.#hungUp.push(leaseId);
    await super.unfollow(leaseId);
  }

  async listenerCount(): Promise<number> {
    return this.streams.size;
  }

  /** What the queue bound counts, as this object keeps it in memory. */
  async queueLoad(): Promise<{ entries: number; bytes: number }> {
    return this.submissions.load();
  }

  /** Appends `count` reply deltas of `text` to the log faster than any reader takes them, and wakes the streams as a change does; answers the id before them. */
  async floodLog(text: string, count: number): Promise<number> {
    const before = this.publisher.newestId();
    for (let i = 0; i < count; i++) this.publisher.appendToReply(crypto.randomUUID(), text, Date.now());
    this.streams.wake();
    return before;
  }
}
