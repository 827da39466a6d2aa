import type { AgentPort, AgentResult, LiveTask } from "../../src/agent/port";
import { TestChatRoom } from "./test-chat-room";

/**
 * A chat on the deployment's model agent whose calls the test holds: a task's start is kept, with the
 * LiveTask it was given, instead of calling the model, so a test can write to it at any moment, also
 * after the task was stopped or the object started again; checking and stopping are the model agent's
 * own. Bound as HELD_MODEL_CHAT_ROOM in the test Worker.
 */
export class HeldModelChatRoom extends TestChatRoom {
  private held: LiveTask | undefined;

  protected override createAgent(): AgentPort {
    const model = super.createAgent();
    return {
      ...model,
      start: async (_task, _now, live) => {
        this.held = live;
        // As the model agent answers: the call reports through `live`, nothing to look at before the deadline.
        return { kind: "pending", checkAt: Number.POSITIVE_INFINITY };
      },
    };
  }

  /** What the held task's append answers (false once the task no longer runs). */
  async write(text: string): Promise<boolean> {
    if (!this.held) throw new Error("no task was started in this object");
    return this.held.append(text);
  }

  async finishWith(result: AgentResult): Promise<void> {
    if (!this.held) throw new Error("no task was started in this object");
    await this.held.finish(result);
  }
}
