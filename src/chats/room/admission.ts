import { sha256Hex } from "../../crypto";
import { offerProjectState } from "../../projects/access";
import { iso } from "../../time";
import { QUEUE_MAX_BYTES, QUEUE_MAX_ENTRIES } from "../limits";
import { offerMaintenanceFlag } from "../maintenance";
import type { NotHere, SubmitOutcome, SubmitRequest } from "../room-calls";
import type { IfBusy } from "../schemas";
import { submissionIdOf } from "../submission-ids";
import { answerJson, fitAnswer } from "./answers";
import type { Chains } from "./chains";
import type { Change } from "./change";
import { joining } from "./joining";
import type { QuestionStorage } from "./question-storage";
import type { ChatRow, RoomStorage } from "./room-storage";
import type { SubmissionStorage } from "./submission-storage";
import type { TaskRunner } from "./task-runner";

const utf8 = new TextEncoder();
const NOT_HERE: NotHere = { kind: "not_found" };

/** What admission works with: the chat's storage, its questions and chains, the runner (an interrupt stops its task) and the change. */
type AdmissionParts = {
  store: RoomStorage;
  submissions: SubmissionStorage;
  questions: QuestionStorage;
  chains: Chains;
  runner: TaskRunner;
  change: Change;
  /** The chat's row when it exists and belongs to this project. */
  chatIn(projectId: string): ChatRow | undefined;
};

/**
 * Accepts a message, a steering text or an answer to a question once per idempotency key (one key space
 * for the three). The lookup and the insert share one synchronous stretch. A steering text waits for the
 * task the chat is working on (running, or being dispatched) to take it; on a chat that is not working it
 * is sent like a message. An answer is a message whose text is the answer in words; a send or steer
 * accepted while a question is pending answers it with its text, or supersedes one that takes no text.
 * A send's If-Busy says how it joins a busy chat (joining.ts), decided in the same stretch as the key.
 */
export async function admit(parts: AdmissionParts, projectId: string, request: SubmitRequest): Promise<SubmitOutcome> {
  const { store, submissions, questions, chains, runner, change, chatIn } = parts;
  // What a question asks never changes, so an answer's words can be found before the await below.
  const before = request.kind === "answer" ? chatIn(projectId) : undefined;
  const asked = before && request.kind === "answer" ? questions.byId(request.questionId) : undefined;
  const fit = asked && request.kind === "answer" ? fitAnswer(questions.view(asked, before!.id), request.answer) : undefined;
  const content = request.kind === "answer" ? (fit?.fits ? fit.content : "") : request.content;
  // Before anything is decided: from here to the insert nothing awaits. The id a new submission would get is its chat's
  // and key's (the chat's id is this object's name, which the chat's row holds once created).
  const chatId = store.isInitialised() ? store.chat()?.id : undefined;
  const [contentHash, newId] = await Promise.all([sha256Hex(content), chatId ? submissionIdOf(chatId, request.idempotencyKey) : undefined]);
  const chat = chatIn(projectId);
  // A chat created while this waited was not there when it came: as if it came first.
  if (!chat || !newId) return NOT_HERE;
  const replyTo = request.kind === "answer" ? null : request.replyToMessageId;
  // Part of the input, so it is refused before the key is looked at (a replay's target was valid, and messages stay).
  if (replyTo && !store.hasMessage(replyTo)) return { kind: "unknown_reply_target" };
  const question = request.kind === "answer" ? questions.byId(request.questionId) : undefined;
  if (request.kind === "answer" && !question) return { kind: "question_not_found" };
  const answer = request.kind === "answer" ? answerJson(request.answer) : null;
  const existing = submissions.byKey(request.idempotencyKey);
  if (existing) {
    // A submission that can no longer run keeps the hash of its text, not the text; an answer is told by its question's stored answer.
    const sameText = existing.content_hash === null ? existing.content === content : existing.content_hash === contentHash;
    const sameAnswer = existing.question_id === question?.id && question?.submission_id === existing.id && question.answer === answer;
    const same = existing.kind === request.kind && existing.reply_to === replyTo && (answer === null ? sameText : sameAnswer);
    if (!same) return { kind: "key_reused" };
    // A cancelled submission must never run, so its key neither replays nor sends it again.
    if (existing.status === "cancelled") return { kind: "cancelled" };
    return { kind: "accepted", replayed: true, submission: { submissionId: existing.id, chatId: chat.id, disposition: existing.disposition } };
  }
  if (request.credential.atCreditLimit) return { kind: "credit_limit" };
  if (chat.archived_at !== null) return { kind: "archived" };
  if (question && question.status !== "pending") return { kind: "question_not_pending", status: question.status };
  if (fit && !fit.fits) return { kind: "answer_does_not_fit", why: fit.why };
  const ifBusy: IfBusy = request.kind === "send" ? request.ifBusy : request.kind === "steer" ? "steer" : "queue";
  const joins = joining(ifBusy, { busy: submissions.hasPendingWork(), working: submissions.isWorking(), held: request.seen.maintenance.value });
  if (joins === "chat_busy") return { kind: "chat_busy" };
  const contentBytes = utf8.encode(content).byteLength;
  const load = submissions.load();
  if (load.entries >= QUEUE_MAX_ENTRIES || load.bytes + contentBytes > QUEUE_MAX_BYTES) return { kind: "queue_full" };
  offerMaintenanceFlag(request.seen.maintenance);
  offerProjectState(projectId, request.seen.project);
  const now = Date.now();
  const submission = { submissionId: newId, chatId: chat.id, disposition: joins.disposition };
  // The working reply stops first (as POST …/stop), then the interrupt goes ahead of everything pending, what the stop requeued included.
  const running = joins.interrupting ? store.runningTask() : undefined;
  if (running) runner.stop(running, now);
  change(now, () => {
    // A task still being dispatched ends stopped once charged, without the agent starting.
    if (joins.interrupting) submissions.stopDispatching();
    const { submissionId } = submission;
    // The question it answered (an answer's, or a pending one that takes its text); any other pending question is superseded.
    const answered = request.kind === "answer" ? questions.answer(question!, request.answer, submissionId, now) : questions.closeBySend(content, submissionId, now);
    // An answer goes on with the chain of the submission whose reply asked.
    const chainRootId = chains.rootFor(submissionId, answered);
    submissions.insert(
      {
        id: submission.submissionId,
        idempotency_key: request.idempotencyKey,
        kind: request.kind,
        content,
        content_bytes: contentBytes,
        content_hash: contentHash,
        reply_to: replyTo,
        disposition: submission.disposition,
        status: joins.status,
        created_at: iso(now),
        question_id: answered ?? null,
        if_busy: ifBusy,
        credential: request.credential.gateName,
        chain_root_id: chainRootId,
      },
      joins.interrupting,
    );
  });
  return { kind: "accepted", replayed: false, submission };
}
