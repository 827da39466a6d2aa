import { ChatRoom } from "../../src/chats/room/chat-room";
import type { Env } from "../../src/env";

/**
 * A chat whose object owes one more deferred job, always due, that always throws: what a job whose
 * storage or peer keeps failing does to the alarm. Bound as FAULTY_CHAT_ROOM in the test Worker.
 */
export class FaultyJobChatRoom extends ChatRoom {
  // When the faulty job ran, by the clock it was given.
  readonly faultyRuns: number[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.schedule.add("faulty", {
      dueAt: () => 0,
      run: async (now: number) => {
        this.faultyRuns.push(now);
        throw new Error("this job always fails");
      },
    });
  }
}
