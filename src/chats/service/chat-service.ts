import type { Context } from "hono";
import { type ApiCaller, checkScope, type GatedEnv } from "../../auth/gate";
import { timed } from "../../http/server-timing";
import type { Scope } from "../../auth/scopes";
import { projectCredits, projectUsage } from "../../credits/project-credits";
import type { Env } from "../../env";
import { ApiError, notFound } from "../../http/problem";
import type { JsonText } from "../../http/router";
import { isUuid, nameUuid } from "../../ids";
import { sha256Hex } from "../../crypto";
import { accessOf, type Timed, untimed } from "../../projects/guards";
import { memberProjects } from "../../projects/store";
import type { Chain } from "../chain-schemas";
import { maintenanceFlag } from "../maintenance";
import type { Question } from "../question-schemas";
import type { ForkBatch, ForkPlanOutcome, NotHere, Submitted } from "../room-calls";
import type { Chat, ForkBody, Forked, Message, QueueEntry, Submission, SubmissionState } from "../schemas";
import { type Refusal, refusalError } from "./refusals";

/** Whom the service acts for, and what it needs of the request that asked: its id, its background work, its timing. */
export type ServiceContext = {
  env: Env;
  caller: ApiCaller;
  requestId: string;
  waitUntil(work: Promise<unknown>): void;
  timed?: Timed;
};

/**
 * What an operation answers: its value (replayed: an idempotency key's first answer again; eventId: the newest chat event
 * whose effects it shows), or the refusal as the error every channel renders from its kind.
 */
export type Served<T> = { ok: true; body: T; replayed: boolean; eventId?: number } | { ok: false; problem: ApiError };

/** A chat as an operation names it. */
export type ChatRef = { projectId: string; chatId: string };

/** A chat's live event stream, holding one of the token's stream places until it ends. */
export type OpenStream = { stream: ReadableStream<Uint8Array>; unfollow(): Promise<void> };

// The namespace of a rerun's key in its fork: a name-based UUID of the source chat and the fork's key.
const RERUN_KEY_NAMESPACE = "6f1d2c8a-93b4-4e07-a5d1-2c7e9b40f3a8";

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.kind);
  }
}
function refuse(refusal: Refusal): never {
  throw new Refused(refusal);
}
/**
 * The object's answer, or the refusal it said: every kind but the one the operation goes on with must be a kind of the
 * refusals table (the compiler holds it to that).
 */
function kept<T extends { kind: string }, K extends T["kind"]>(
  outcome: T | NotHere,
  kind: K & (Exclude<T | NotHere, { kind: K }> extends Refusal ? unknown : never),
): Extract<T, { kind: K }> {
  if (outcome.kind !== kind) refuse(outcome as Exclude<T | NotHere, { kind: K }> as unknown as Refusal);
  return outcome as Extract<T, { kind: K }>;
}

const done = <T>(body: T, more: { replayed?: boolean; eventId?: number } = {}): Served<T> => ({
  ok: true,
  body,
  replayed: more.replayed ?? false,
  ...(more.eventId === undefined ? {} : { eventId: more.eventId }),
});

/**
 * The chats of the projects a caller may reach, whatever channel asks: REST routes, MCP tools and A2A methods call
 * these operations. Each checks the token's scope and the caller's project access once, calls the chat's object once,
 * and answers its outcome typed; a refusal is one kind of the one table (refusals.ts).
 */
export class ChatService {
  constructor(private readonly context: ServiceContext) {}

  private get env() {
    return this.context.env;
  }

  /** The id of the request it acts in: a problem's instance names it. */
  get requestId(): string {
    return this.context.requestId;
  }

  private measure: Timed = (name, work) => (this.context.timed ?? untimed)(name, work);

  /** Runs an operation: a refusal (or an ApiError of the checks) is answered, anything else is thrown on. */
  private async serve<T>(operation: () => Promise<Served<T>>): Promise<Served<T>> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof Refused) return { ok: false, problem: refusalError(error.refusal) };
      if (error instanceof ApiError) return { ok: false, problem: error };
      throw error;
    }
  }

  /** The token's scope for what the operation needs (chat:read to read, chat:write to write, unless it says another). */
  private checkScope(need: "read" | "write", scope: Scope = need === "read" ? "chat:read" : "chat:write"): void {
    checkScope(this.context.caller, scope);
  }

  /** The caller's access to the project: 404 when it has none, 403 for a viewer writing. */
  private accessTo(projectId: string, need: "read" | "write") {
    return accessOf(this.env.DB, this.context.caller.accountId, need, projectId, this.measure);
  }

  /** The scope, then the project access the operation needs. */
  private project(projectId: string, need: "read" | "write") {
    this.checkScope(need);
    return this.accessTo(projectId, need);
  }

  /** The scope, the project access, then the chat's object; whether the chat is in that project is the object's answer. */
  private async chat(ref: ChatRef, need: "read" | "write", scope?: Scope) {
    const chatId = ref.chatId.toLowerCase();
    this.checkScope(need, scope);
    // No such chat can be in any project: answered before the project is looked up.
    if (!isUuid(chatId)) throw notFound();
    return { access: await this.accessTo(ref.projectId, need), room: this.env.CHAT_ROOM.getByName(chatId) };
  }

  /** The projects the caller is a member of. */
  projects(): Promise<Served<{ items: Awaited<ReturnType<typeof memberProjects>> }>> {
    return this.serve(async () => {
      this.checkScope("read");
      return done({ items: await memberProjects(this.env.DB, this.context.caller.accountId) });
    });
  }

  /** The project's chats, active or archived, as the project's list hands them over (JSON text, built once per change). */
  chats(projectId: string, archived: boolean): Promise<Served<JsonText<{ items: Chat[] }>>> {
    return this.serve(async () => {
      const access = await this.project(projectId, "read");
      return done(await this.env.PROJECT_CHATS.getByName(access.projectId).list(access.projectId, archived));
    });
  }

  /** A new empty chat; with a key, a retry answers the chat it made (replayed), also when both run at once. */
  createChat(projectId: string, title: string, key: string | undefined): Promise<Served<Chat | JsonText<Chat>>> {
    return this.serve<Chat | JsonText<Chat>>(async () => {
      const access = await this.project(projectId, "write");
      if (!key) {
        const chatId = crypto.randomUUID();
        return done(await this.env.CHAT_ROOM.getByName(chatId).create(chatId, access.projectId, title));
      }
      const chats = this.env.PROJECT_CHATS.getByName(access.projectId);
      const claim = await chats.claimCreateKey(key, title);
      if (claim.kind === "conflict") refuse({ kind: "create_key_reused" });
      if (claim.kind === "replay" && claim.answer) return done(claim.answer as JsonText<Chat>, { replayed: true });
      // Creating is idempotent in the chat's object, so a replay whose first request has not answered yet creates nothing twice.
      const chat = await this.env.CHAT_ROOM.getByName(claim.chatId).create(claim.chatId, access.projectId, title);
      if (claim.kind === "new") await chats.recordCreateAnswer(key, JSON.stringify(chat));
      return done(chat, { replayed: claim.kind !== "new" });
    });
  }

  /** A chat as it stands. */
  getChat(ref: ChatRef): Promise<Served<Chat>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      const { chat, eventId } = kept(await room.get(access.projectId), "chat");
      return done(chat, { eventId });
    });
  }

  /** Renames a chat. */
  rename(ref: ChatRef, title: string): Promise<Served<Chat>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      return done(kept(await room.rename(access.projectId, title), "chat").chat);
    });
  }

  /** Archives a chat (it then refuses messages) or restores it. */
  setArchived(ref: ChatRef, archived: boolean): Promise<Served<Chat>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      return done(kept(await room.setArchived(access.projectId, archived), "chat").chat);
    });
  }

  /** A send (If-Busy as it says), a steer or an answer: the chat's object decides; the accepted submission, or why not. */
  submit(ref: ChatRef, submitted: Submitted): Promise<Served<Submission>> {
    return this.serve(async () => {
      const [{ access, room }, maintenance] = await Promise.all([this.chat(ref, "write"), maintenanceFlag(this.env.DB)]);
      const { gateName, atCreditLimit } = this.context.caller;
      const request = { ...submitted, seen: { maintenance, project: access.project }, credential: { gateName, atCreditLimit } };
      const outcome = kept(await this.measure("chat", () => room.submit(access.projectId, request)), "accepted");
      return done(outcome.submission, { replayed: outcome.replayed });
    });
  }

  /**
   * Forks a chat at a message (room/forks.ts): the source plans it (its key, its point, its size) in one call, then hands
   * its history over batch by batch into the new chat, each batch one read of the source; with `rerun`, the message's
   * text is then sent to the fork under a key fixed by the fork's. A retry with the same key (also at once) drives the
   * same fork to its end and answers it as it now is, replayed.
   */
  fork(ref: ChatRef, key: string, body: ForkBody): Promise<Served<Forked>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      const rerun = body.rerun ?? false;
      const fingerprint = await sha256Hex(JSON.stringify([body.atMessageId.toLowerCase(), body.title ?? null, rerun]));
      const ask = {
        kind: "plan" as const,
        key,
        fingerprint,
        atMessageId: body.atMessageId.toLowerCase(),
        rerun,
        title: body.title,
        creditLimited: this.context.caller.atCreditLimit,
      };
      // One call asks both ways: a plan is answered a plan or a refusal, a batch a batch.
      const plan = kept((await this.measure("chat", () => room.forkSource(access.projectId, ask))) as ForkPlanOutcome | NotHere, "plan");
      const fork = this.env.CHAT_ROOM.getByName(plan.forkChatId);
      for (let afterSeq: number | null = 0; afterSeq !== null; ) {
        const batch = kept((await room.forkSource(access.projectId, { kind: "batch", afterSeq, throughSeq: plan.throughSeq })) as ForkBatch | NotHere, "batch");
        ({ copiedSeq: afterSeq } = await fork.forkFill(plan.forkChatId, access.projectId, { title: plan.title, forkedFrom: plan.forkedFrom, afterSeq, batch }));
        // Other requests get their turn between two batches, also where every object shares one thread (wrangler dev).
        await scheduler.wait(0);
      }
      let submissionId: string | null = null;
      if (plan.rerunContent !== null) {
        const idempotencyKey = await nameUuid(RERUN_KEY_NAMESPACE, `${ref.chatId.toLowerCase()}/${key}`);
        const sent = await this.submit(
          { projectId: access.projectId, chatId: plan.forkChatId },
          { kind: "send", idempotencyKey, content: plan.rerunContent, replyToMessageId: null, ifBusy: "queue" },
        );
        if (!sent.ok) throw sent.problem;
        submissionId = sent.body.submissionId;
      }
      const { chat } = kept(await fork.get(access.projectId), "chat");
      return done({ chat, submissionId }, { replayed: plan.replayed });
    });
  }

  /** A question the agent asked. */
  question(ref: ChatRef, questionId: string): Promise<Served<JsonText<Question>>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      return done(kept(await room.question(access.projectId, questionId.toLowerCase()), "question").question);
    });
  }

  /** A page of the history, newest first. */
  messages(ref: ChatRef, cursor: string | undefined, limit: number): Promise<Served<{ items: Message[]; nextCursor: string | null }>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      const page = kept(await room.messages(access.projectId, cursor, limit), "page");
      return done({ items: page.items, nextCursor: page.nextCursor }, { eventId: page.eventId });
    });
  }

  /** One message as it stands now. */
  message(ref: ChatRef, messageId: string): Promise<Served<Message>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      const read = kept(await room.message(access.projectId, messageId.toLowerCase()), "message");
      return done(read.message, { eventId: read.eventId });
    });
  }

  /** The pending, dispatching and failed submissions, in order. */
  queue(ref: ChatRef): Promise<Served<{ items: QueueEntry[] }>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      const { items, eventId } = kept(await room.queueEntries(access.projectId), "queue");
      return done({ items }, { eventId });
    });
  }

  /** What a submission became. */
  submission(ref: ChatRef, submissionId: string): Promise<Served<SubmissionState>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      return done(kept(await room.submissionState(access.projectId, submissionId.toLowerCase()), "submission").submission);
    });
  }

  /** Stops a working reply (one that ended is answered as it is). */
  stopReply(ref: ChatRef, messageId: string): Promise<Served<Message>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      const outcome = await room.stopReply(access.projectId, messageId.toLowerCase());
      if (outcome.kind === "message_not_found") refuse({ kind: "reply_not_found" });
      return done(kept(outcome, "message").message);
    });
  }

  /** Cancels a submission that has not started. */
  cancelSubmission(ref: ChatRef, submissionId: string): Promise<Served<null>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      const outcome = await room.cancelSubmission(access.projectId, submissionId.toLowerCase());
      if (outcome.kind === "started") refuse({ kind: "submission_started" });
      kept(outcome, "cancelled");
      return done(null);
    });
  }

  /** A submission's chain: it and the answers that followed the questions its replies asked. */
  chain(ref: ChatRef, submissionId: string): Promise<Served<JsonText<Chain>>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read");
      return done(kept(await room.chain(access.projectId, submissionId.toLowerCase()), "chain").chain);
    });
  }

  /** Cancels a chain, whatever its last submission is doing. */
  cancelChain(ref: ChatRef, submissionId: string): Promise<Served<JsonText<Chain>>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "write");
      return done(kept(await room.cancelChain(access.projectId, submissionId.toLowerCase()), "chain").chain);
    });
  }

  /**
   * The chat's live event stream after an event id (a snapshot first without one), holding one of the token's stream
   * places. scope: what the channel's caller follows with (A2A follows its own task under chat:write).
   */
  follow(ref: ChatRef, after: number | null, scope: Scope = "chat:read"): Promise<Served<OpenStream>> {
    return this.serve(async () => {
      const { access, room } = await this.chat(ref, "read", scope);
      const { accountId, gateName } = this.context.caller;
      const gate = this.env.TOKEN_GATE.getByName(gateName);
      const leaseId = crypto.randomUUID();
      const lease = await gate.openStream(leaseId);
      if (lease.kind === "limited") refuse({ kind: "too_many_streams", retryAfterSeconds: lease.retryAfterSeconds });
      const followed = await room.follow(access.projectId, after, { gateName, leaseId, accountId, projectId: access.projectId });
      // The place was taken for a stream that did not open.
      if (followed.kind === "not_found") this.context.waitUntil(gate.closeStream(leaseId));
      const { stream } = kept(followed, "stream");
      return done({ stream, unfollow: () => room.unfollow(leaseId) });
    });
  }

  /** Whether the credential is still valid: a wait that outlives a revocation asks again before it answers. */
  stillAdmitted(): Promise<Served<null>> {
    return this.serve(async () => {
      const { gateName } = this.context.caller;
      if (!(await this.env.TOKEN_GATE.getByName(gateName).isValid(gateName))) refuse({ kind: "credential_gone" });
      return done(null);
    });
  }

  /** Whether a task can run now, what it costs, and (for the owner) the paying balance. */
  credits(projectId: string) {
    return this.serve(async () => done(await projectCredits(this.env, await this.project(projectId, "read"), this.context.caller)));
  }

  /** The project's ended tasks per UTC day, from and to inclusive (by default the last 30 days). */
  usage(projectId: string, range: { from?: string; to?: string }) {
    return this.serve(async () => done(await projectUsage(this.env, await this.project(projectId, "read"), range)));
  }
}

/** The service for one request of an admitted caller (REST, MCP or A2A): its hops timed for Server-Timing. */
export function chatService(c: Context<GatedEnv>): ChatService {
  return new ChatService({
    env: c.env,
    caller: c.get("caller"),
    requestId: c.get("requestId"),
    waitUntil: (work) => c.executionCtx.waitUntil(work),
    timed: (name, work) => timed(c, name, work),
  });
}

/** A served value for a route: a refusal is thrown, as the problem+json the app answers with. */
export function served<T>(answer: Served<T>): Extract<Served<T>, { ok: true }> {
  if (!answer.ok) throw answer.problem;
  return answer;
}
