import type { CancelOutcome, MessageOutcome } from "../room-calls";
import type { Chains } from "./chains";
import type { Change } from "./change";
import type { QuestionStorage } from "./question-storage";
import type { RoomStorage } from "./room-storage";
import type { SubmissionRow, SubmissionStorage } from "./submission-storage";
import type { TaskRunner } from "./task-runner";

/** What control works with: the chat's storage, its questions and chains, the runner whose task it stops, and the change. */
type ControlParts = { store: RoomStorage; submissions: SubmissionStorage; questions: QuestionStorage; chains: Chains; runner: TaskRunner; change: Change };

/** Control of the chat's work: stopping a reply, cancelling a submission that has not started, cancelling a chain. */
export class RoomControl {
  constructor(private readonly parts: ControlParts) {}

  /**
   * Stops an agent reply: a working one ends at once as interrupted_by_user with what it had written,
   * and the queue moves on; one that has ended is answered as it is, so a retried or late stop is safe.
   */
  stopReply(messageId: string): MessageOutcome {
    const { store, runner } = this.parts;
    const message = store.message(messageId);
    if (message?.role !== "owner") return { kind: "message_not_found" };
    const task = store.runningTask();
    if (message.status !== "working" || task?.reply_message_id !== messageId) return { kind: "message", message };
    runner.stop(task, Date.now());
    return { kind: "message", message: store.message(messageId)! };
  }

  /** Removes a submission that has not started (queued, steering or failed) for good; its key then answers submission_cancelled. */
  cancelSubmission(submissionId: string): CancelOutcome {
    const row = this.parts.submissions.byId(submissionId);
    if (!row) return { kind: "submission_not_found" };
    if (row.status === "cancelled") return { kind: "cancelled" };
    if (row.status !== "queued" && row.status !== "steering" && row.status !== "failed") return { kind: "started" };
    this.cancelWaiting(row, Date.now());
    return { kind: "cancelled" };
  }

  /**
   * Cancels a chain by what its end is doing: a waiting end is cancelled (as DELETE …/queue/{id}), a working one
   * stopped (as POST …/stop), and a question it waits on withdrawn; an ended chain is left as it is.
   */
  cancelChain(row: SubmissionRow): void {
    const { store, submissions, questions, chains, runner, change } = this.parts;
    const { end, question } = chains.endOf(row);
    const now = Date.now();
    const task = store.runningTask();
    if (end.status === "queued" || end.status === "steering") {
      this.cancelWaiting(end, now);
    } else if (end.status === "dispatching") {
      // Its reply is written stopped once it is charged, and the agent never starts (as an interrupt does).
      change(now, () => submissions.stopDispatching(end.id), "unlisted");
    } else if (task && (task.submission_id === end.id || (end.status === "done" && task.reply_message_id === end.reply_message_id))) {
      // Its task runs (or, a taken steering text, the task that took it): the reply stops.
      runner.stop(task, now);
    } else if (question?.status === "pending") {
      change(now, () => questions.withdraw(question, now));
    }
  }

  /** A submission that has not started leaves for good; its key then answers submission_cancelled. */
  private cancelWaiting(row: SubmissionRow, now: number): void {
    // Only queuedCount is part of the summary: the chat list must hear that it went down.
    this.parts.change(now, () => this.parts.submissions.move(row, "cancelled"), row.status === "queued" ? "listed" : "unlisted");
  }
}
