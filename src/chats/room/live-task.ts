import { turnsFrom } from "./earlier-turns";
import { withQuote } from "../../agent/conversation";
import type { AgentResult, LiveTask, TokenUsage } from "../../agent/port";
import { withinUnits } from "../../text";
import type { RoomStorage, TaskRow } from "./room-storage";
import type { SubmissionStorage } from "./submission-storage";
import { REPLY_MAX } from "../../agent/limits";

/** What a live task may do to the task it runs for: the task runner answers each call only while that task is the running one. */
export type TaskControl = {
  /** Appends to the reply; false once the task no longer runs. */
  append(text: string): boolean;
  takeSteering(): string[];
  addUsage(usage: TokenUsage): void;
  finish(result: AgentResult): Promise<void>;
};

/** What an agent that runs in this object (a model) may do while its task runs: read the chat, and act through its task's control. */
export function liveTask(task: TaskRow, store: RoomStorage, submissions: SubmissionStorage, control: TaskControl): LiveTask {
  const submission = () => submissions.byId(task.submission_id)!;
  return {
    earlierTurns: () => turnsFrom(store.turnsBefore(submission().user_message_id ?? task.reply_message_id)),
    prompt: () => {
      const { content, reply_to } = submission();
      return withQuote(content, reply_to ? store.message(reply_to)?.content : undefined);
    },
    reply: () => store.message(task.reply_message_id)?.content ?? "",
    append: (text) => {
      const fits = withinUnits(text, REPLY_MAX - store.replyLength(task.reply_message_id));
      return control.append(fits) && fits.length === text.length;
    },
    takeSteering: () => control.takeSteering(),
    addUsage: (usage) => control.addUsage(usage),
    finish: (result) => control.finish(result.content === undefined ? result : { ...result, content: withinUnits(result.content, REPLY_MAX) }),
  };
}
