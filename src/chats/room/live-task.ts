import { turnsFrom } from "./earlier-turns";
import { withQuote } from "../../agent/conversation";
import type { AgentResult, LiveTask } from "../../agent/port";
import { withinUnits } from "../../text";
import type { RoomStorage, TaskRow } from "./room-storage";
import type { SubmissionStorage } from "./submission-storage";
import { REPLY_MAX } from "../../agent/limits";

/** What the task runner lets a live task do, each only while that task is the running one. */
type Runner = {
  runningTaskNamed(taskId: string): TaskRow | undefined;
  appendToReply(task: TaskRow, text: string, now: number): void;
  takeOfferedSteering(task: TaskRow, now: number): string[];
  complete(taskId: string, result: AgentResult): Promise<unknown>;
};

/** What an agent that runs in this object (a model) may do while its task runs; nothing once the task has ended. */
export function liveTask(task: TaskRow, store: RoomStorage, submissions: SubmissionStorage, runner: Runner): LiveTask {
  const running = () => runner.runningTaskNamed(task.id);
  const submission = () => submissions.byId(task.submission_id)!;
  return {
    earlierTurns: () => turnsFrom(store.turnsBefore(submission().user_message_id ?? task.owner_message_id)),
    prompt: () => {
      const { content, reply_to } = submission();
      return withQuote(content, reply_to ? store.message(reply_to)?.content : undefined);
    },
    reply: () => store.message(task.owner_message_id)?.content ?? "",
    append: (text) => {
      const current = running();
      if (!current) return false;
      const fits = withinUnits(text, REPLY_MAX - store.replyLength(task.owner_message_id));
      if (fits) runner.appendToReply(current, fits, Date.now());
      return fits.length === text.length;
    },
    takeSteering: () => {
      const current = running();
      return current ? runner.takeOfferedSteering(current, Date.now()) : [];
    },
    addUsage: (usage) => {
      if (running()) store.addTaskUsage(task.id, usage);
    },
    finish: async (result) => void (await runner.complete(task.id, result.content === undefined ? result : { ...result, content: withinUnits(result.content, REPLY_MAX) })),
  };
}
