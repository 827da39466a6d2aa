import type { IfBusy, QueueEntry, QueueEntryChange, SubmissionFailure, SubmissionState } from "../schemas";

export type SubmissionStatus = "queued" | "steering" | "dispatching" | "running" | "done" | "failed" | "cancelled";
/** Which call made a submission (an answer is a send to a question): keys are shared by all, but a key is bound to the call that used it first. */
type SubmissionKind = "send" | "steer" | "answer";
export type SubmissionRow = {
  seq: number;
  id: string;
  idempotency_key: string;
  kind: SubmissionKind;
  content: string;
  content_bytes: number;
  reply_to: string | null;
  disposition: "queued" | "started";
  status: SubmissionStatus;
  created_at: string;
  // The task it ran as, or (a steering text taken) the running task that took it.
  task_id: string | null;
  failed_at: number | null;
  account_id: string | null;
  user_message_id: string | null;
  reply_message_id: string | null;
  // A failed entry left the queue (its 24 hours ended, or newer failures pushed it out) and followers were told.
  left_queue_at: number | null;
  // What its task was charged (null for submissions from before it was kept), and given back when it failed.
  charged: number | null;
  refunded: number;
  // Why it could not run (status failed).
  failure_code: SubmissionFailure | null;
  // SHA-256 of its content (hex): a replay is told from a changed body by it once the text is dropped (null before it was kept).
  content_hash: string | null;
  // The question it answered: an answer's, or one a send or steer answered with its text.
  question_id: string | null;
  // How it joins a busy chat, as accepted (null for submissions from before it was kept: queue).
  if_busy: IfBusy | null;
  // Its place in the run order: null runs in seq order; an interrupt's is below every other's.
  run_order: number | null;
  // An interrupt stopped it while it was being dispatched: its reply is written stopped and the agent never starts.
  stop_requested: number;
  // The TokenGate name of the credential that made it, whose credit limit its task counts against (null before it was kept).
  credential: string | null;
  // The submission leading its chain: itself, or for one that answered a question the chain of the submission whose reply asked it (null before it was kept: itself).
  chain_root_id: string | null;
};
/** What the queue bound counts: its entries that wait or are being dispatched, and the UTF-8 bytes of their content. */
export type QueueLoad = { entries: number; bytes: number };
/** What followers hear of the queue: an entry that joined it or changed status (as it is now), or one that left. */
export type QueueChange = { entry: QueueEntryChange } | { removed: string };

// A failed entry stays in the queue this long, unless newer failures push it out: the queue keeps at most the newest
// FAILED_KEPT_ENTRIES failed entries holding FAILED_KEPT_BYTES, so its snapshot stays bounded like its pending part.
export const FAILED_KEPT_MS = 24 * 3600_000;
// Failed entries still in the queue, through their own partial index: without statistics the planner would take the
// status index and walk every failed submission the chat ever had.
const BY_FAILED_IN_QUEUE = "submissions INDEXED BY submissions_failed_in_queue";
const FAILED_IN_QUEUE = "status = 'failed' AND left_queue_at IS NULL";
// The run order: an interrupt's run_order is below every seq, a later interrupt's below an earlier one's.
const RUN_ORDER = "COALESCE(run_order, seq)";
/** The queue as clients see it (what waits or is being dispatched, and the failed entries it keeps), each with its place in the run order. */
const QUEUE_ROWS = `SELECT id, content, status, created_at, ${RUN_ORDER} AS k FROM submissions WHERE status IN ('queued', 'steering', 'dispatching')
  UNION ALL
  SELECT id, content, status, created_at, ${RUN_ORDER} AS k FROM ${BY_FAILED_IN_QUEUE} WHERE ${FAILED_IN_QUEUE} AND failed_at > ?`;
export const FAILED_KEPT_ENTRIES = 100;
export const FAILED_KEPT_BYTES = 1_000_000;

/** The running task as the submissions know it: its own submission and its reply. */
type TaskLink = { id: string; submission_id: string; reply_message_id: string };

type Counts = Record<"queued" | "steering" | "dispatching" | "running", number>;
const isCounted = (status: SubmissionStatus): status is keyof Counts => status === "queued" || status === "steering" || status === "dispatching" || status === "running";
/** The statuses the queue bound counts: entries that wait or are being dispatched (a running one has left the queue). */
const isWaiting = (status: SubmissionStatus) => status === "queued" || status === "steering" || status === "dispatching";
type EntryFields = Pick<SubmissionRow, "id" | "content" | "created_at">;
export const entryOf = (row: EntryFields, status: SubmissionStatus): QueueEntry => ({
  id: row.id,
  content: row.content,
  status: status as QueueEntry["status"],
  createdAt: row.created_at,
});

/** What a submission became, as GET …/submissions/{id} shows it; `errorOf` reads its error message's text (a failed one's reason). */
export function stateOf(row: SubmissionRow, errorOf: () => string | undefined): SubmissionState {
  const { id, status, task_id: taskId, user_message_id: userMessageId, reply_message_id: replyMessageId, created_at: createdAt } = row;
  // Submissions from before charges were kept here show 0; from before If-Busy, what their call did.
  const credits = { charged: row.charged ?? 0, refunded: row.refunded };
  const failure = status === "failed" && row.failure_code ? { code: row.failure_code, message: errorOf() ?? "" } : null;
  const ifBusy = row.if_busy ?? (row.kind === "steer" ? "steer" : "queue");
  return { id, status, taskId, userMessageId, replyMessageId, createdAt, credits, failure, ifBusy };
}

/**
 * A chat's submissions and the queue they form: every change of status goes through here, which
 * keeps the counts and the queue bound's bytes exact in memory and records, for the event log, each
 * entry that joined, changed or left the queue, so nothing ever renders the whole queue per change.
 */
export class SubmissionStorage {
  private countsKept: Counts | undefined;
  private waitingBytes = 0;
  private changes: QueueChange[] = [];
  // When the oldest failed entry still in the queue reaches its 24 hours (undefined: not read yet).
  private failedExpiry: number | undefined;
  // Failed entries that failed at or before this had left the queue, unannounced, before the schema kept left_queue_at.
  private trackedAfterKept: number | undefined;
  // The steering texts the running task has taken, in order (undefined: not read yet).
  private steeringOfTask: { taskId: string; texts: string[] } | undefined;

  constructor(private readonly sql: SqlStorage) {}

  /** Drops what memory holds (the schema has just changed). */
  forget(): void {
    this.countsKept = undefined;
    this.failedExpiry = undefined;
    this.trackedAfterKept = undefined;
    this.steeringOfTask = undefined;
    this.changes = [];
  }

  private counts(): Counts {
    if (this.countsKept) return this.countsKept;
    const counts: Counts = { queued: 0, steering: 0, dispatching: 0, running: 0 };
    let bytes = 0;
    for (const row of this.sql.exec<{ status: SubmissionStatus; n: number; bytes: number }>(
      "SELECT status, COUNT(*) AS n, SUM(content_bytes) AS bytes FROM submissions WHERE status IN ('queued', 'steering', 'dispatching', 'running') GROUP BY status",
    )) {
      if (isCounted(row.status)) counts[row.status] = row.n;
      if (isWaiting(row.status)) bytes += row.bytes;
    }
    this.waitingBytes = bytes;
    this.countsKept = counts;
    return counts;
  }

  /** What the queue bound counts now. */
  load(): QueueLoad {
    const counts = this.counts();
    return { entries: counts.queued + counts.steering + counts.dispatching, bytes: this.waitingBytes };
  }

  queuedCount(): number {
    return this.counts().queued;
  }

  /** A task runs or is being dispatched: what the summary's isWorking shows. */
  isWorking(): boolean {
    const counts = this.counts();
    return counts.dispatching + counts.running > 0;
  }

  /** A submission waits for the task runner: queued, or being dispatched. */
  waitsForDispatch(): boolean {
    const counts = this.counts();
    return counts.queued + counts.dispatching > 0;
  }

  hasPendingWork(): boolean {
    const counts = this.counts();
    return counts.queued + counts.steering + counts.dispatching + counts.running > 0;
  }

  byKey(key: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE idempotency_key = ?", key).toArray()[0];
  }

  byId(id: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE id = ?", id).toArray()[0];
  }

  /** The submission a task ran for (steering texts it took come later in submission order). */
  ofTask(taskId: string): SubmissionRow | undefined {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE task_id = ? ORDER BY seq LIMIT 1", taskId).toArray()[0];
  }

  /** Stores a submission; `ahead` puts it before every pending entry (an interrupt), else it runs after them. */
  insert(
    row: Pick<
      SubmissionRow,
      | "id"
      | "idempotency_key"
      | "kind"
      | "content"
      | "content_bytes"
      | "content_hash"
      | "reply_to"
      | "disposition"
      | "status"
      | "created_at"
      | "question_id"
      | "if_busy"
      | "credential"
      | "chain_root_id"
    >,
    ahead = false,
  ): SubmissionRow {
    this.counts();
    // Below every seq and every earlier interrupt's run_order: -(the next seq).
    const runOrder = ahead ? "-(COALESCE((SELECT MAX(seq) FROM submissions), 0) + 1)" : "NULL";
    const inserted = this.sql
      .exec<SubmissionRow>(
        `INSERT INTO submissions (id, idempotency_key, kind, content, content_bytes, content_hash, reply_to, disposition, status, created_at, question_id, charged,
           if_busy, credential, chain_root_id, run_order)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ${runOrder}) RETURNING *`,
        row.id,
        row.idempotency_key,
        row.kind,
        row.content,
        row.content_bytes,
        row.content_hash,
        row.reply_to,
        row.disposition,
        row.status,
        row.created_at,
        row.question_id,
        row.if_busy,
        row.credential,
        row.chain_root_id,
      )
      .one();
    this.moved(inserted, null, row.status);
    return inserted;
  }

  /**
   * The next submission to dispatch: one already dispatching (the oldest: one an interrupt stopped ends before the
   * interrupt's runs), or the first queued in run order.
   */
  next(): SubmissionRow | undefined {
    // An index lookup, and only for a status some submission has.
    const counts = this.counts();
    const first = (status: SubmissionStatus, order: string) =>
      this.sql.exec<SubmissionRow>(`SELECT * FROM submissions WHERE status = ? ORDER BY ${order} LIMIT 1`, status).toArray()[0];
    return (counts.dispatching > 0 ? first("dispatching", "seq") : undefined) ?? (counts.queued > 0 ? first("queued", RUN_ORDER) : undefined);
  }

  /** An interrupt was taken (or a chain cancelled: only its end): what is being dispatched ends stopped once its task is charged, without starting the agent. */
  stopDispatching(id?: string): void {
    if (this.counts().dispatching === 0) return;
    if (id === undefined) this.sql.exec("UPDATE submissions SET stop_requested = 1 WHERE status = 'dispatching'");
    else this.sql.exec("UPDATE submissions SET stop_requested = 1 WHERE id = ? AND status = 'dispatching'", id);
  }

  /** Moves a submission from the status it has (as the caller read it) to another. */
  move(
    row: SubmissionRow,
    status: SubmissionStatus,
    extra: Partial<Pick<SubmissionRow, "task_id" | "account_id" | "failed_at" | "user_message_id" | "reply_message_id" | "charged" | "failure_code">> = {},
  ): void {
    this.sql.exec(
      `UPDATE submissions SET status = ?, task_id = COALESCE(?, task_id), account_id = COALESCE(?, account_id), failed_at = COALESCE(?, failed_at),
         user_message_id = COALESCE(?, user_message_id), reply_message_id = COALESCE(?, reply_message_id), charged = COALESCE(?, charged),
         failure_code = COALESCE(?, failure_code) WHERE id = ?`,
      status,
      extra.task_id ?? null,
      extra.account_id ?? null,
      extra.failed_at ?? null,
      extra.user_message_id ?? null,
      extra.reply_message_id ?? null,
      extra.charged ?? null,
      extra.failure_code ?? null,
      row.id,
    );
    this.moved(row, row.status, status);
    if (status === "failed") this.keepFailedWithinBound(extra.failed_at ?? Date.now());
    // It can no longer run: a cancelled text is never used, a done one lives on as its user message.
    if (status === "cancelled" || status === "done") this.dropText("id = ?", row.id);
  }

  /** A task's own submission is done when the task ends (it was running, so it had left the queue); a failed task's charge is owed back. */
  finishRunning(id: string, refunded: number): void {
    // Its text lives on as its user message: dropped in the same statement (rows from before the hash keep it).
    this.sql.exec(
      `UPDATE submissions SET status = 'done', refunded = ?, content = IIF(content_hash IS NULL, content, ''),
         content_bytes = IIF(content_hash IS NULL, content_bytes, 0) WHERE id = ?`,
      refunded,
      id,
    );
    if (this.countsKept) this.countsKept.running--;
  }

  /**
   * What a submission that can no longer run keeps: its key, the hash of its text and its links, never
   * the text (a done one's lives on as its user message), so a chat's submissions cost a few hundred
   * bytes each, whatever was sent. Rows from before the hash was kept keep their text, to compare replays.
   */
  private dropText(where: string, ...bindings: unknown[]): void {
    this.sql.exec(`UPDATE submissions SET content = '', content_bytes = 0 WHERE ${where} AND content_hash IS NOT NULL AND content != ''`, ...bindings);
  }

  /** Steering entries waiting for the running task, oldest first. */
  steeringWaiting(limit: number): SubmissionRow[] {
    if (this.counts().steering === 0 || limit <= 0) return [];
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE status = 'steering' ORDER BY seq LIMIT ?", limit).toArray();
  }

  /** The running task takes a steering entry: it is done, as part of that task, and its text is the user message named. */
  takeSteering(row: SubmissionRow, task: TaskLink, userMessageId: string): void {
    // Read before the row joins the task, or a list read afresh (after an eviction) would hold it twice.
    const taken = this.steeringTaken(task);
    this.move(row, "done", { task_id: task.id, user_message_id: userMessageId, reply_message_id: task.reply_message_id });
    taken.push(row.content);
  }

  /** The steering texts a task has taken, in order: submissions of the task other than its own. */
  steeringTaken(task: TaskLink): string[] {
    if (this.steeringOfTask?.taskId !== task.id) {
      // From their user messages: a submission's own text is dropped once it is taken.
      const texts = this.sql
        .exec<{ content: string }>(
          "SELECT m.content FROM submissions s JOIN messages m ON m.id = s.user_message_id WHERE s.task_id = ? AND s.id != ? ORDER BY s.seq",
          task.id,
          task.submission_id,
        )
        .toArray()
        .map((r) => r.content);
      this.steeringOfTask = { taskId: task.id, texts };
    }
    return this.steeringOfTask.texts;
  }

  /** The task ended, or could not start, before taking them: steering entries wait as queued, in their place in submission order. */
  requeueSteering(): void {
    const counts = this.counts();
    if (counts.steering === 0) return;
    for (const row of this.sql.exec<EntryFields>("UPDATE submissions SET status = 'queued' WHERE status = 'steering' RETURNING id, content, created_at").toArray()) {
      this.changes.push(this.entryChange(row, "queued"));
    }
    counts.queued += counts.steering;
    counts.steering = 0;
  }

  /** The queue as clients see it, in the order it will run: what waits or is being dispatched, and the failed entries it keeps. */
  queue(now: number): QueueEntry[] {
    return this.sql
      .exec<EntryFields & { status: SubmissionStatus }>(`${QUEUE_ROWS} ORDER BY k`, now - FAILED_KEPT_MS)
      .toArray()
      .map((r) => entryOf(r, r.status));
  }

  /** The entry a queue entry precedes in the run order, or null when it is last: where a follower places it. */
  private entryAfter(id: string, now: number): string | null {
    const [next] = this.sql
      .exec<{ id: string }>(`SELECT id FROM (${QUEUE_ROWS}) WHERE k > (SELECT ${RUN_ORDER} FROM submissions WHERE id = ?) ORDER BY k LIMIT 1`, now - FAILED_KEPT_MS, id)
      .toArray();
    return next?.id ?? null;
  }

  private entryChange(row: EntryFields, status: SubmissionStatus): QueueChange {
    return { entry: { ...entryOf(row, status), before: this.entryAfter(row.id, Date.now()) } };
  }

  /** The queue's changes since the last call, in order, for the event log. */
  takeChanges(): QueueChange[] {
    const changes = this.changes;
    this.changes = [];
    return changes;
  }

  /** Failed entries whose 24 hours have ended leave the queue (their removal becomes a change); when the next one will. */
  expireFailed(now: number): number | undefined {
    if (now >= this.failedExpiryAt()) {
      this.leaveQueue("failed_at > ? AND failed_at <= ?", now, this.trackedAfter(), now - FAILED_KEPT_MS);
      this.failedExpiry = undefined;
    }
    return this.nextFailedExpiry();
  }

  /** When the oldest failed entry still in the queue reaches its 24 hours; undefined when none is in it. */
  nextFailedExpiry(): number | undefined {
    const at = this.failedExpiryAt();
    return Number.isFinite(at) ? at : undefined;
  }

  private failedExpiryAt(): number {
    this.failedExpiry ??=
      (this.sql.exec<{ at: number | null }>(`SELECT MIN(failed_at) AS at FROM ${BY_FAILED_IN_QUEUE} WHERE ${FAILED_IN_QUEUE} AND failed_at > ?`, this.trackedAfter()).one().at ??
        Number.POSITIVE_INFINITY) + FAILED_KEPT_MS;
    return this.failedExpiry;
  }

  /** The newest failed entries stay, within the count and bytes the queue keeps; older ones leave the queue early. */
  private keepFailedWithinBound(now: number): void {
    let entries = 0;
    let bytes = 0;
    const pushedOut: number[] = [];
    for (const row of this.sql.exec<{ seq: number; content_bytes: number }>(
      `SELECT seq, content_bytes FROM ${BY_FAILED_IN_QUEUE} WHERE ${FAILED_IN_QUEUE} AND failed_at > ? ORDER BY failed_at DESC, seq DESC`,
      now - FAILED_KEPT_MS,
    )) {
      entries++;
      bytes += row.content_bytes;
      if (entries > FAILED_KEPT_ENTRIES || bytes > FAILED_KEPT_BYTES) pushedOut.push(row.seq);
    }
    if (pushedOut.length) this.leaveQueue(`seq IN (${pushedOut.map(() => "?").join(", ")})`, now, ...pushedOut);
    this.failedExpiry = undefined;
  }

  /** Failed entries (among those still in the queue) that match `where` leave it now. */
  private leaveQueue(where: string, now: number, ...bindings: unknown[]): void {
    const left = this.sql.exec<{ id: string }>(`UPDATE ${BY_FAILED_IN_QUEUE} SET left_queue_at = ? WHERE ${FAILED_IN_QUEUE} AND ${where} RETURNING id`, now, ...bindings).toArray();
    for (const { id } of left) {
      this.changes.push({ removed: id });
      // Out of the queue it can never run: its text goes (a webhook about it then shows an empty content).
      this.dropText("id = ?", id);
    }
  }

  /** Failed entries that failed 24 hours or more before the schema kept left_queue_at had left the queue unannounced. */
  private trackedAfter(): number {
    this.trackedAfterKept ??= (this.sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = 'failed_floor'").toArray()[0]?.value ?? 0) - FAILED_KEPT_MS;
    return this.trackedAfterKept;
  }

  /** Keeps the counts and the waiting bytes exact, and records what followers must hear. */
  private moved(row: SubmissionRow, from: SubmissionStatus | null, to: SubmissionStatus): void {
    const counts = this.countsKept;
    if (counts) {
      if (from && isCounted(from)) counts[from]--;
      if (isCounted(to)) counts[to]++;
      if (from && isWaiting(from)) this.waitingBytes -= row.content_bytes;
      if (isWaiting(to)) this.waitingBytes += row.content_bytes;
    }
    if (from === to) return;
    if (isWaiting(to) || to === "failed") this.changes.push(this.entryChange(row, to));
    else if (from && (isWaiting(from) || (from === "failed" && this.failedInQueue(row)))) this.changes.push({ removed: row.id });
    if (from === "failed") this.failedExpiry = undefined;
  }

  /** Whether followers still hold this failed entry: it has not left the queue, nor expired before the schema tracked it. */
  private failedInQueue(row: SubmissionRow): boolean {
    return row.left_queue_at === null && (row.failed_at ?? 0) > this.trackedAfter();
  }
}
