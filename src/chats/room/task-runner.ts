import { taskCallbackUrl } from "../../agent/callback-url";
import { askedBy } from "../../agent/asked-question";
import type { AgentPort, AgentResult, AgentTask, TaskStep } from "../../agent/port";
import { config } from "../../config";
import type { ChargeOutcome } from "../../credits/account-ledger";
import type { TaskRef } from "../../credits/statement";
import { log } from "../../log";
import type { RoomContext } from "./change";
import { dispatchDecision } from "./dispatch-hold";
import { ALARM_STEPS } from "../limits";
import { liveTask, type TaskControl } from "./live-task";
import { messageOfTask } from "./publisher";
import type { TaskRow } from "./room-storage";
import type { SubmissionRow } from "./submission-storage";
import type { Usage } from "../schemas";
import { REPLY_MAX, STEERING_PER_TASK } from "../../agent/limits";

/** A task that is not running, as an external agent's late call finds it. */
export type EndedTask = "stopped" | "already_finished" | "unknown";
export type PartialOutcome = "appended" | "duplicate" | "out_of_order" | "too_long" | EndedTask;
type SteeringItem = { id: string; content: string; replyToMessageId: string | null; createdAt: string };
export type SteeringOffer = { kind: "offer"; items: SteeringItem[] } | { kind: EndedTask };
export type SteeringAck = { kind: "taken" } | { kind: "refused"; id: string } | { kind: EndedTask };
/** How a task ends: an agent's result (its final content, why it failed, what it asks), or a stop. */
export type TaskEnd = Omit<AgentResult, "status"> & { status: AgentResult["status"] | "interrupted_by_user" };

// Maintenance or a suspended project: the next submission is looked at again this often.
const HOLD_RECHECK_MS = 2_000;
// The owner's ledger or D1 could not be reached: the next submission is tried again this much later.
const DISPATCH_RETRY_MS = 5_000;
const NOT_ENOUGH_CREDITS = "Not enough credits to run this task. Top up the project owner's balance and send the message again.";
const CREDENTIAL_LIMIT_REACHED =
  "The credit limit of the API token or connected app that sent this is reached, so this task did not run. Raise or remove its limit and send the message again.";
/** Why a dispatch could not take a task's credits: the owner's balance, or the sending credential's limit. */
type ChargeRefusal = { code: "insufficient_credits" | "token_credit_limit"; message: string };
const REFUSALS: Record<"insufficient" | "over_limit", ChargeRefusal> = {
  insufficient: { code: "insufficient_credits", message: NOT_ENOUGH_CREDITS },
  over_limit: { code: "token_credit_limit", message: CREDENTIAL_LIMIT_REACHED },
};

/**
 * Runs the chat's tasks one at a time: dispatches queued submissions (charging the owner's ledger),
 * starts them with the agent, checks a running task when its check is due, and records its end.
 * It answers the agent's calls about the running task (partial output, steering, its result) and
 * tells every other caller why a task is no longer running.
 */
export class TaskRunner {
  // What the running task was asked, kept while it runs (its submission never changes).
  private runningInput: AgentTask | undefined;
  // The next dispatch waits until then (a hold, a ledger or D1 that could not be reached, an alarm that failed).
  private notBefore = 0;

  constructor(
    private readonly room: RoomContext,
    private readonly agent: AgentPort,
  ) {}

  /** A model task runs in the memory of the object that started it: one found running after a restart lost its call, and fails now. */
  recoverOrphan(now: number): boolean {
    const orphan = this.agent.live && this.room.store.isInitialised() ? this.room.store.runningTask() : undefined;
    if (orphan) this.room.store.setTaskCheckAt(orphan.id, now);
    return orphan !== undefined;
  }

  /** When the runner has work: the running task's check, or the next dispatch; undefined when there is none. */
  dueAt(): number | undefined {
    const task = this.room.store.runningTask();
    if (task) return Math.max(task.check_at, this.notBefore);
    return this.room.submissions.waitsForDispatch() ? this.notBefore : undefined;
  }

  /** Finishes what is due, then dispatches queued submissions in order, one task at a time, within ALARM_STEPS. */
  async runDue(): Promise<void> {
    for (let step = 0; step < ALARM_STEPS; step++) {
      const now = Date.now();
      const task = this.room.store.runningTask();
      if (task) {
        if (task.check_at > now) return;
        await this.check(task, now);
        continue;
      }
      const next = this.room.submissions.next();
      if (!next) return;
      if (!next.task_id || !next.account_id) {
        const assigned = await this.assign(next, now);
        if (assigned === "cancelled") continue;
        if (assigned === "wait") return;
      }
      if (!(await this.dispatch(next))) {
        this.notBefore = Date.now() + DISPATCH_RETRY_MS;
        return;
      }
    }
    // The step budget ran out with work left (many entries that each end at once): dueAt says so, and the next alarm goes on.
  }

  /** The running task's check has come: it ends (a result, or its deadline passed) or writes and is looked at again later. */
  private async check(task: TaskRow, now: number): Promise<void> {
    const step: TaskStep = {
      startedAt: task.started_at,
      now,
      written: this.room.store.replyLength(task.reply_message_id),
      takeSteering: () => {
        this.takeOfferedSteering(task, now);
        return this.room.submissions.steeringTaken(task);
      },
    };
    const result = this.agent.check(this.inputOf(task), step);
    if (!("checkAt" in result)) return this.finish(task, result);
    if (now >= this.deadlineOf(task)) {
      // AGENT_TIMEOUT_SECONDS, for every agent: whatever still works on the task is dropped.
      this.agent.abandon?.(this.inputOf(task));
      const seconds = Math.round(config(this.room.env).agent.timeoutMs / 1000);
      // What was written stays in the reply, as it does when the agent itself fails.
      return this.finish(task, { status: "failed", error: `The agent did not finish within ${seconds} s.` });
    }
    this.room.store.setTaskCheckAt(task.id, Math.min(result.checkAt, this.deadlineOf(task)));
    if (result.append) this.appendToReply(task, result.append, now);
  }

  /**
   * Gives the next submission its task id and paying account, once dispatching may go on; it must
   * wait during maintenance, while its project is suspended, or when D1 cannot say.
   */
  private async assign(next: SubmissionRow, now: number): Promise<"assigned" | "wait" | "cancelled"> {
    const decision = await dispatchDecision(this.room.env, this.room.store.chat()!.project_id);
    // A queued entry may have been cancelled while D1 was asked (a started one cannot be).
    if (next.status === "queued" && this.room.submissions.byId(next.id)?.status !== "queued") return "cancelled";
    if (decision.kind !== "go") {
      if (next.status === "dispatching" && !next.task_id) {
        // Nothing is working now: the submission waits in the queue, and steering texts meant for it as messages of their own.
        this.room.change(now, () => {
          this.room.submissions.move(next, "queued");
          this.room.submissions.requeueSteering();
        });
      }
      this.notBefore = now + (decision.kind === "hold" ? HOLD_RECHECK_MS : DISPATCH_RETRY_MS);
      return "wait";
    }
    // The task id and the paying account are stored before credits are taken, so a restart retries the same idempotent charge.
    const assigned = { task_id: next.task_id ?? crypto.randomUUID(), account_id: decision.ownerAccountId };
    this.room.change(now, () => this.room.submissions.move(next, "dispatching", assigned));
    Object.assign(next, { status: "dispatching", ...assigned });
    return "assigned";
  }

  /** Charges and starts one submission's task. False when the owner's ledger could not be reached (retry later). */
  private async dispatch(submission: SubmissionRow): Promise<boolean> {
    const taskId = submission.task_id!;
    const cost = config(this.room.env).taskCreditCost;
    // The statement names the task by its project, chat and submission.
    const ref = { projectId: this.room.store.chat()!.project_id, chatId: this.room.store.chat()!.id, submissionId: submission.id };
    let charged: ChargeOutcome | "over_limit";
    try {
      charged = await this.charge(submission, cost, ref);
    } catch (error) {
      log.warn("charge_failed", { chatId: this.room.store.chat()!.id }, error);
      return false;
    }
    this.notBefore = 0;
    const now = Date.now();
    const ofTask = messageOfTask(taskId, submission.id, now);
    if (charged !== "charged") {
      const refusal = REFUSALS[charged];
      this.room.change(now, () => {
        this.room.submissions.move(submission, "failed", { failed_at: now, failure_code: refusal.code });
        this.room.outbox.record("submission.failed", submission.id, now);
        this.room.submissions.requeueSteering();
        this.room.publisher.addMessage({ id: crypto.randomUUID(), role: "error", content: refusal.message, status: null, ...ofTask }, now);
      });
      return true;
    }
    // An interrupt was taken while it was dispatched: it ends stopped, as it would have a moment after starting, and the agent never hears of it.
    if (this.room.submissions.byId(submission.id)?.stop_requested) {
      this.startStopped(submission, cost, now);
      return true;
    }
    const task: TaskRow = {
      id: taskId,
      submission_id: submission.id,
      reply_message_id: crypto.randomUUID(),
      started_at: now,
      check_at: now,
      partials: 0,
      input_tokens: null,
      output_tokens: null,
    };
    const userMessageId = crypto.randomUUID();
    // The chat list hears of the start with the task's parts, from the alarm.
    this.room.change(now, () => {
      this.room.publisher.addMessage({ id: userMessageId, role: "user", content: submission.content, status: null, ...ofTask }, now);
      this.room.publisher.addMessage({ id: task.reply_message_id, role: "owner", content: "", status: "working", ...ofTask }, now);
      this.room.submissions.move(submission, "running", { user_message_id: userMessageId, reply_message_id: task.reply_message_id, charged: cost });
      this.room.store.insertTask(task);
    });
    try {
      const start = await this.agent.start(this.agentTask(submission, taskId), now, liveTask(task, this.room.store, this.room.submissions, this.controlOf(task)));
      if (start.kind === "finished") this.finish(task, start.result);
      else if (this.room.store.runningTask()?.id === taskId) this.room.store.setTaskCheckAt(taskId, Math.min(start.checkAt, this.deadlineOf(task)));
    } catch (error) {
      this.finish(task, { status: "failed", error: `The agent could not take the task: ${String((error as Error)?.message ?? error).slice(0, 300)}` });
    }
    return true;
  }

  /**
   * Takes a task's credits: counted against the sending credential's limit in its TokenGate, then taken from the
   * owner's ledger, and let go in the gate when the ledger refused them. Each step is idempotent by task id and a
   * failed dispatch is retried from the first, so after any crash the two agree once the retry is done. The limit
   * is checked first: when both would refuse, the failure is the credential's.
   */
  private async charge(submission: SubmissionRow, cost: number, ref: TaskRef): Promise<ChargeOutcome | "over_limit"> {
    const taskId = submission.task_id!;
    const accountId = submission.account_id!;
    const gate = submission.credential === null ? undefined : this.room.env.TOKEN_GATE.getByName(submission.credential);
    if (gate && (await gate.reserveCredits(taskId, cost)) === "over_limit") return "over_limit";
    const charged = await this.room.env.ACCOUNT_LEDGER.getByName(accountId).charge(accountId, taskId, cost, ref);
    if (charged !== "charged") await gate?.releaseCredits(taskId);
    return charged;
  }

  /** A charged task that an interrupt stopped before it started: its messages are written with its reply already stopped, empty. */
  private startStopped(submission: SubmissionRow, cost: number, now: number): void {
    const taskId = submission.task_id!;
    const ofTask = messageOfTask(taskId, submission.id, now);
    const [userMessageId, replyId] = [crypto.randomUUID(), crypto.randomUUID()];
    const usage: Usage = { credits: cost, inputTokens: null, outputTokens: null };
    this.room.change(now, () => {
      this.room.publisher.addMessage({ id: userMessageId, role: "user", content: submission.content, status: null, ...ofTask }, now);
      this.room.publisher.addMessage({ id: replyId, role: "owner", content: "", status: "interrupted_by_user", ...ofTask, usage }, now);
      this.room.submissions.move(submission, "running", { user_message_id: userMessageId, reply_message_id: replyId, charged: cost });
      this.room.submissions.finishRunning(submission.id, 0);
      this.room.usage.record({ taskId, endedAt: now, ...usage });
      this.room.submissions.requeueSteering();
      this.room.outbox.record("message.completed", replyId, now);
    });
  }

  /** An agent's result for a task: the http adapter's callback, or the end of a model's run in this object. */
  async complete(taskId: string, result: AgentResult): Promise<"done" | EndedTask> {
    const task = this.runningTaskNamed(taskId);
    if (!task) return this.endedTask(taskId);
    this.finish(task, result);
    return "done";
  }

  /** What a live task may do to its own task: each call acts only while that task is the running one. */
  private controlOf(task: TaskRow): TaskControl {
    const running = () => this.runningTaskNamed(task.id);
    const whileRunning = <T>(act: (current: TaskRow) => T, otherwise: T) => {
      const current = running();
      return current ? act(current) : otherwise;
    };
    return {
      append: (text) =>
        whileRunning((current) => {
          this.appendToReply(current, text, Date.now());
          return true;
        }, false),
      takeSteering: () => whileRunning((current) => this.takeOfferedSteering(current, Date.now()), []),
      addUsage: (usage) => whileRunning(() => this.room.store.addTaskUsage(task.id, usage), undefined),
      finish: async (result) => void (await this.complete(task.id, result)),
    };
  }

  /** The user stopped the task: it ends at once as interrupted_by_user with what it had written; telling the agent is best effort. */
  stop(task: TaskRow, now: number): void {
    const input = this.inputOf(task);
    this.end(task, { status: "interrupted_by_user" }, now);
    // It must not hold up the answer; the agent's later output is refused.
    this.room.ctx.waitUntil(this.agent.stop(input));
  }

  /** Records an agent's result for the running task (a failed task's credits go back after the change, in the background). */
  private finish(task: TaskRow, result: AgentResult): void {
    if (this.room.store.runningTask()?.id === task.id) this.end(task, result, Date.now());
  }

  /**
   * Records a task's end in one change: the reply's status and content, the question it asks, a visible
   * error on failure (credits owed back), steering texts it did not take back in the queue, the chat no
   * longer working, and the webhook events it causes.
   */
  private end(task: TaskRow, end: TaskEnd, now: number): void {
    let becameAwaiting = false;
    this.room.change(now, () => {
      const reply = this.room.store.message(task.reply_message_id)!;
      const submission = this.room.submissions.byId(task.submission_id);
      const failed = end.status === "failed";
      // A task running when the release that keeps charges came paid what a task cost then.
      const charged = submission?.charged ?? config(this.room.env).taskCreditCost;
      // The stored row has the token counts the task's model calls reported so far.
      const usage = usageOf(this.room.store.runningTask() ?? task, end, failed ? 0 : charged);
      // The result is authoritative over what was streamed.
      const content = end.content ?? reply.content;
      const asked = askedBy(end, content);
      const wasAwaiting = this.room.questions.pending() !== undefined;
      const questionId = asked ? this.room.questions.ask(asked, { taskId: task.id, messageId: reply.id }, now) : null;
      this.room.publisher.finishReply(reply, end.status, content, usage, questionId, now);
      this.room.usage.record({ taskId: task.id, endedAt: now, ...usage });
      if (failed) {
        const error = `${asSentence(end.error ?? "The agent could not complete this task.")} Its credits were returned.`;
        this.room.publisher.addMessage({ id: crypto.randomUUID(), role: "error", content: error, status: null, ...messageOfTask(task.id, task.submission_id, now) }, now);
        this.room.store.owesRefund(task.id, submission?.account_id ?? null, submission?.credential ?? null);
      }
      this.room.submissions.finishRunning(task.submission_id, failed ? charged : 0);
      this.room.store.deleteTask(task.id);
      this.room.submissions.requeueSteering();
      this.room.outbox.record("message.completed", task.reply_message_id, now);
      becameAwaiting = !wasAwaiting && asked !== undefined;
    });
    // The chat as the change left it (touched, its version and updatedAt moved on), in the same synchronous stretch.
    if (becameAwaiting) this.room.change(now, () => this.room.outbox.record("chat.awaiting_user", JSON.stringify(this.room.store.view()), now), "unlisted");
  }

  /** An external agent's partial output: appended once per part number, in order, only while the task runs. */
  appendPartial(taskId: string, seq: number, text: string): PartialOutcome {
    const task = this.runningTaskNamed(taskId);
    if (!task) return this.endedTask(taskId);
    if (seq <= task.partials) return "duplicate";
    if (seq > task.partials + 1) return "out_of_order";
    if (this.room.store.replyLength(task.reply_message_id) + text.length > REPLY_MAX) return "too_long";
    this.room.store.setTaskPartials(task.id, seq);
    this.appendToReply(task, text, Date.now());
    return "appended";
  }

  /** The steering texts an external agent's running task may take next, oldest first. */
  steeringFor(taskId: string): SteeringOffer {
    const task = this.runningTaskNamed(taskId);
    if (!task) return { kind: this.endedTask(taskId) };
    const items = this.steeringOffer(task).map((r) => ({ id: r.id, content: r.content, replyToMessageId: r.reply_to, createdAt: r.created_at }));
    return { kind: "offer", items };
  }

  /**
   * An external agent took these steering texts (at least once: a repeated acknowledgement is fine).
   * Those not taken yet must be the first ones offered, in order; each becomes a user message of the task.
   */
  acceptSteering(taskId: string, ids: string[]): SteeringAck {
    if (!this.room.store.isInitialised()) return { kind: "unknown" };
    const task = this.runningTaskNamed(taskId);
    const own = task?.submission_id ?? this.room.submissions.ofTask(taskId)?.id;
    if (!own) return { kind: "unknown" };
    const takenByTask = (id: string) => {
      const row = this.room.submissions.byId(id);
      return row?.task_id === taskId && row.id !== own && row.status === "done";
    };
    if (!task) return ids.every(takenByTask) ? { kind: "taken" } : { kind: this.endedTask(taskId) };
    // In order: each id not taken yet must be the next one offered; those before a refused one are taken.
    const offer = this.steeringOffer(task);
    const take: SubmissionRow[] = [];
    let refused: string | undefined;
    for (const id of ids) {
      if (take.some((row) => row.id === id) || takenByTask(id)) continue;
      const next = offer[take.length];
      if (next?.id !== id) {
        refused = id;
        break;
      }
      take.push(next);
    }
    this.takeSteering(task, take, Date.now());
    return refused ? { kind: "refused", id: refused } : { kind: "taken" };
  }

  /** The steering entries the running task may take now: the oldest waiting, within its cap. */
  private steeringOffer(task: TaskRow): SubmissionRow[] {
    return this.room.submissions.steeringWaiting(STEERING_PER_TASK - this.room.submissions.steeringTaken(task).length);
  }

  /** The running task takes the steering entries offered to it now; returns their texts. */
  takeOfferedSteering(task: TaskRow, now: number): string[] {
    const offer = this.steeringOffer(task);
    this.takeSteering(task, offer, now);
    return offer.map((row) => row.content);
  }

  /** The running task takes these steering entries: each leaves the queue and becomes a user message of the task, free of charge. */
  private takeSteering(task: TaskRow, rows: SubmissionRow[], now: number): void {
    if (rows.length === 0) return;
    this.room.change(now, () => {
      for (const row of rows) {
        const messageId = crypto.randomUUID();
        this.room.submissions.takeSteering(row, task, messageId);
        this.room.publisher.addMessage({ id: messageId, role: "user", content: row.content, status: null, ...messageOfTask(task.id, row.id, now) }, now);
      }
    });
  }

  /** The reply's text as it is written; the chat list hears of it when the task ends. */
  appendToReply(task: TaskRow, text: string, now: number): void {
    this.room.change(now, () => this.room.publisher.appendToReply(task.reply_message_id, text, now), "unlisted");
  }

  /** The running task, when it is the one named. */
  runningTaskNamed(taskId: string): TaskRow | undefined {
    const task = this.room.store.isInitialised() ? this.room.store.runningTask() : undefined;
    return task?.id === taskId ? task : undefined;
  }

  /** Why a task is not running: the user stopped it, it ended otherwise, or this chat never had it. */
  endedTask(taskId: string): EndedTask {
    const submission = this.room.store.isInitialised() ? this.room.submissions.ofTask(taskId) : undefined;
    if (!submission) return "unknown";
    const reply = submission.reply_message_id ? this.room.store.message(submission.reply_message_id) : undefined;
    return reply?.status === "interrupted_by_user" ? "stopped" : "already_finished";
  }

  /** When a task still working fails (AGENT_TIMEOUT_SECONDS after it started). */
  private deadlineOf(task: TaskRow): number {
    return task.started_at + config(this.room.env).agent.timeoutMs;
  }

  private inputOf(task: TaskRow): AgentTask {
    if (this.runningInput?.taskId !== task.id) this.runningInput = this.agentTask(this.room.submissions.byId(task.submission_id)!, task.id);
    return this.runningInput;
  }

  private agentTask(submission: SubmissionRow, taskId: string): AgentTask {
    const chat = this.room.store.chat()!;
    const { publicOrigin } = config(this.room.env);
    return {
      taskId,
      chatId: chat.id,
      projectId: chat.project_id,
      content: submission.content,
      replyToMessageId: submission.reply_to,
      callbackUrl: taskCallbackUrl(publicOrigin, chat.id, taskId, "result"),
      steeringUrl: taskCallbackUrl(publicOrigin, chat.id, taskId, "steering"),
      answer: this.room.questions.answeredBy(submission),
    };
  }
}

/** A reason as a sentence of its own, so the note that follows it does not run on from it (a thrown error's message may lack its stop). */
const asSentence = (text: string) => (/[.!?…]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`);

/** What an ended task cost: its credits after any refund, and the token counts its model calls and its result reported. */
function usageOf(task: TaskRow, end: TaskEnd, credits: number): Usage {
  const sum = (sofar: number | null, reported: number | undefined) => (sofar === null && reported === undefined ? null : (sofar ?? 0) + (reported ?? 0));
  return { credits, inputTokens: sum(task.input_tokens, end.usage?.inputTokens), outputTokens: sum(task.output_tokens, end.usage?.outputTokens) };
}
