import type { Chain, ChainAsTask, ChainState } from "../chain-schemas";
import type { Message } from "../schemas";
import type { QuestionRow, QuestionStorage } from "./question-storage";
import type { RoomStorage } from "./room-storage";
import { stateOf, type SubmissionRow, type SubmissionStorage } from "./submission-storage";

/** A link as the chain's one query reads it: the submission, the question its reply asked, and when that reply ended. */
type LinkRow = SubmissionRow & { asked: string | null; asked_kind: QuestionRow["kind"] | null; reply_ended_at: number | null };

/** The chain's last link; a submission whose chain the query did not find is its own end. */
const endLink = (links: LinkRow[], from: SubmissionRow): LinkRow => links.at(-1) ?? { ...from, asked: null, asked_kind: null, reply_ended_at: null };

/** The end's state: its status, then its reply's, then its question's (a withdrawn question is the one declined without a submission). */
function chainState(end: SubmissionRow, reply: Message | null, question: QuestionRow | undefined): ChainState {
  switch (end.status) {
    case "queued":
    case "steering":
      return "queued";
    case "dispatching":
    case "running":
      return "working";
    case "failed":
      return "refused";
    case "cancelled":
      return "cancelled";
  }
  // A steering text the running task took ends with that task's reply, which may still be working.
  if (reply?.status === "working") return "working";
  if (reply?.status === "interrupted_by_user") return "cancelled";
  if (reply?.status === "failed") return "failed";
  if (question?.status === "pending") return "awaiting";
  if (question?.status === "declined" && question.submission_id === null) return "cancelled";
  return "completed";
}

/**
 * The chains of a chat's submissions: every submission records the root of its chain when it is
 * accepted, so a chain, its end and its state are one indexed query, whatever channel asks (MCP's
 * tasks and waits, A2A's tasks, the REST read).
 */
export class Chains {
  constructor(
    private readonly sql: SqlStorage,
    private readonly submissions: SubmissionStorage,
    private readonly store: RoomStorage,
    private readonly questions: QuestionStorage,
  ) {}

  /** The root a new submission records: for one that answers a question, that of the submission whose reply asked it; else its own id. */
  rootFor(submissionId: string, answeredQuestionId: string | undefined): string {
    const question = answeredQuestionId ? this.questions.byId(answeredQuestionId) : undefined;
    const asker = question ? this.submissions.ofTask(question.task_id) : undefined;
    return asker ? (asker.chain_root_id ?? asker.id) : submissionId;
  }

  /** The chain from a submission to its end, each with the question its reply asked. */
  private linksFrom(from: SubmissionRow): LinkRow[] {
    // A submission from before roots were kept (its root null) leads its own chain, which answers since then name.
    const root = from.chain_root_id ?? from.id;
    return this.sql
      .exec<LinkRow>(
        `SELECT s.*, m.question_id AS asked, q.kind AS asked_kind, m.ended_at AS reply_ended_at FROM submissions s LEFT JOIN messages m ON m.id = s.reply_message_id
           LEFT JOIN questions q ON q.id = m.question_id WHERE (s.chain_root_id = ? OR s.id = ?) AND s.seq >= ? ORDER BY s.seq`,
        root,
        root,
        from.seq,
      )
      .toArray();
  }

  /** The chain's last submission, seen from one of its submissions. */
  endOf(from: SubmissionRow): { end: SubmissionRow; question: QuestionRow | undefined } {
    const end = endLink(this.linksFrom(from), from);
    return { end, question: end.asked === null ? undefined : this.questions.byId(end.asked) };
  }

  /** The chain seen from one of its submissions, as the API shows it (its links, when already read). */
  view(from: SubmissionRow, chatId: string, links = this.linksFrom(from)): Chain {
    const end = endLink(links, from);
    const reply = end.reply_message_id === null ? null : (this.store.message(end.reply_message_id) ?? null);
    const question = end.asked === null ? undefined : this.questions.byId(end.asked);
    return {
      rootId: from.chain_root_id ?? from.id,
      state: chainState(end, reply, question),
      end: stateOf(end, () => this.store.errorOf(end.id)),
      reply,
      question: question ? this.questions.view(question, chatId) : null,
      links: links.map((link) => ({ submissionId: link.id, questionId: link.asked, questionKind: link.asked_kind })),
    };
  }

  /**
   * The chain led by a submission as a task: its steps (each submission's user message and reply) and when its state was
   * entered. A submission leads a task when it leads its chain and is not a steering text some other task took.
   */
  task(root: SubmissionRow, chatId: string, withUserMessages = true): ChainAsTask {
    const links = this.linksFrom(root);
    const { chain, enteredAt } = this.standing(root, chatId, links);
    const steps = links.map((link, i) => ({
      submission: stateOf(link, () => this.store.errorOf(link.id)),
      // Only a task's history shows them: a read without it leaves them out.
      userMessage: !withUserMessages || link.user_message_id === null ? null : (this.store.message(link.user_message_id) ?? null),
      // The end's reply the view has read already.
      reply: i === links.length - 1 ? chain.reply : link.reply_message_id === null ? null : (this.store.message(link.reply_message_id) ?? null),
    }));
    const own = steps[0]?.reply;
    // A steering text leads a task only once it ran as its own (no task took it before that task ended).
    const taken = root.kind === "steer" && (root.status === "steering" || root.status === "cancelled" || (own != null && own.submissionId !== root.id));
    const isTask = (root.chain_root_id === null || root.chain_root_id === root.id) && !taken;
    // A chat an A2A client made a context for shows that context on its tasks; any other its own id.
    const contextId = this.store.chat()?.a2a_context ?? chatId;
    return { chain, chatId, contextId, isTask, enteredAt, steps };
  }

  /** The chain seen from a submission and when its state was entered (ms): a task's state without its steps. */
  standing(from: SubmissionRow, chatId: string, links = this.linksFrom(from)): { chain: Chain; enteredAt: number } {
    const chain = this.view(from, chatId, links);
    return { chain, enteredAt: this.enteredAt(chain, endLink(links, from)) };
  }

  /** When the chain's state was entered (ms): its end's acceptance, start, question, reply's end or failure. */
  private enteredAt(chain: Chain, end: LinkRow): number {
    const at = (iso: string | null | undefined) => (iso ? Date.parse(iso) : undefined);
    const question = chain.question;
    switch (chain.state) {
      case "queued":
        return Date.parse(end.created_at);
      case "working":
        return at(chain.reply?.createdAt) ?? Date.parse(end.created_at);
      case "awaiting":
        return at(question?.createdAt) ?? Date.parse(end.created_at);
      case "refused":
        return end.failed_at ?? Date.parse(end.created_at);
    }
    // A withdrawn, expired or superseded question closed after the reply ended: the later of the two.
    const closed = at(question?.closedAt);
    const ended = Math.max(end.reply_ended_at ?? 0, closed ?? 0);
    return ended || (end.left_queue_at ?? at(chain.reply?.createdAt) ?? Date.parse(end.created_at));
  }

  /** Submissions after `afterSeq` that lead a chain (each may be a task), oldest first, at most `limit`: for the chat list's task index. */
  rootsAfter(afterSeq: number, limit: number): { id: string; seq: number }[] {
    return this.sql
      .exec<{ id: string; seq: number }>("SELECT id, seq FROM submissions WHERE seq > ? AND (chain_root_id IS NULL OR chain_root_id = id) ORDER BY seq LIMIT ?", afterSeq, limit)
      .toArray();
  }

  /** The submissions of the chat that lead a chain, newest first (candidates for tasks: the caller keeps those that are). */
  roots(): SubmissionRow[] {
    return this.sql.exec<SubmissionRow>("SELECT * FROM submissions WHERE chain_root_id IS NULL OR chain_root_id = id ORDER BY seq DESC").toArray();
  }
}
