import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { type ChainView, type OwnSubmission, readChain, viewChain } from "./chain-view";
import { answerFromResponse, askable, elicitationParams, type Modes } from "./elicitation";
import { clientCapabilities } from "./revision";
import type { Sealer } from "./sealing";
import type { ChatService } from "../chats/service/chat-service";

/** The Tasks extension (2026-07-28): a long call answers a task the client polls, updates with input and cancels. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const TTL_MS = 604_800_000;
const POLL_INTERVAL_MS = 5000;
const MISSING_CAPABILITY = -32021;
const NOT_FOUND = "Task not found";

/** What a task handle carries, sealed: where its chain is (so tasks/* go to the chat's object with no lookup), how to answer, and when it was made. */
type Handle = { p: string; c: string; own: OwnSubmission; modes: Modes; tool: string; at: number };

/** A JSON-RPC error answered with exactly this message (the SDK's McpError would prefix it with its code). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

// One answer for a forged, foreign or unknown handle, and for a chain the caller can no longer reach: no oracle.
const notFound = () => new RpcError(ErrorCode.InvalidParams, NOT_FOUND);

/** Whether a request declared the extension in its client capabilities. */
export function declaresTasks(params: unknown): boolean {
  const extensions = clientCapabilities(params)?.extensions as Record<string, unknown> | undefined;
  return typeof extensions?.[TASKS_EXTENSION] === "object" && extensions[TASKS_EXTENSION] !== null;
}

/** tasks/* from a request that did not declare the extension. */
export const extensionRequired = () =>
  new RpcError(MISSING_CAPABILITY, `Declare the ${TASKS_EXTENSION} extension in the request's client capabilities to use tasks.`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });

const statusMessages: Record<ChainView["status"], string> = {
  working: "The agent is working on it.",
  input_required: "The agent asks a question.",
  completed: "Done.",
  cancelled: "Cancelled.",
};

/** The task of a call: what one client of one credential holds (the principal), for the channels over this chain. */
export class TaskChannel {
  constructor(
    private readonly sealer: Sealer,
    private readonly principal: string,
    private readonly chats: ChatService,
  ) {}

  /** The CreateTaskResult for a stored submission: a tasks/get for it resolves at once. */
  async create(chat: { projectId: string; chatId: string }, own: OwnSubmission, modes: Modes, tool: string) {
    const at = Date.now();
    const handle: Handle = { p: chat.projectId, c: chat.chatId, own, modes, tool, at };
    const taskId = await this.sealer.seal("task", this.principal, handle);
    const stamp = new Date(at).toISOString();
    return {
      resultType: "task",
      taskId,
      status: "working",
      statusMessage: statusMessages.working,
      createdAt: stamp,
      lastUpdatedAt: stamp,
      ttlMs: TTL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
  }

  /** tasks/get: the chain as the handle's modes see it; input a request cannot take is shown as working, with how to answer it. */
  async get(taskId: unknown, requestModes: Modes) {
    const handle = await this.handleOf(taskId);
    const view = await this.view(handle);
    const base = { taskId, createdAt: new Date(handle.at).toISOString(), lastUpdatedAt: new Date().toISOString(), ttlMs: TTL_MS, pollIntervalMs: POLL_INTERVAL_MS };
    switch (view.status) {
      case "working":
        return { resultType: "complete", ...base, status: "working", statusMessage: view.message };
      case "cancelled":
        return { resultType: "complete", ...base, status: "cancelled", statusMessage: statusMessages.cancelled };
      case "completed":
        return { resultType: "complete", ...base, status: "completed", statusMessage: statusMessages.completed, result: { resultType: "complete", ...view.result } };
      case "input_required": {
        const { question } = view;
        if (!askable(question.kind, requestModes)) {
          const statusMessage = `Waiting for an answer to question ${question.id}; answer it with answer_question`;
          return { resultType: "complete", ...base, status: "working", statusMessage };
        }
        const inputRequests = { [question.id]: { method: "elicitation/create", params: elicitationParams(question) } };
        return { resultType: "complete", ...base, status: "input_required", statusMessage: statusMessages.input_required, inputRequests };
      }
    }
  }

  /** tasks/update: answers the chain's pending question from its response, once; other keys are ignored. */
  async update(taskId: unknown, inputResponses: unknown) {
    const handle = await this.handleOf(taskId);
    const view = await this.view(handle);
    const responses = typeof inputResponses === "object" && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
    if (view.status === "input_required" && view.question.id in responses) {
      const outcome = await answerFromResponse(this.chats, { projectId: handle.p, chatId: handle.c }, view.question, responses[view.question.id]);
      if (outcome.kind === "unfit" || outcome.kind === "refused")
        throw new RpcError(ErrorCode.InvalidParams, "The input response was not taken as an answer; see data.", outcome.problem);
    }
    return { resultType: "complete" };
  }

  /** tasks/cancel: cancels, stops or withdraws what the chain's end is doing; an ended chain is left as it is. */
  async cancel(taskId: unknown) {
    const { p, c, own } = await this.handleOf(taskId);
    const cancelled = await this.chats.cancelChain({ projectId: p, chatId: c }, own.submissionId);
    if (!cancelled.ok) throw notFound();
    return { resultType: "complete" };
  }

  private async view(handle: Handle): Promise<ChainView> {
    const ref = { projectId: handle.p, chatId: handle.c, own: handle.own };
    const chain = await readChain(ref, this.chats);
    // A chat or submission that is gone, or a project the caller can no longer read: the same answer as a forged handle.
    if (!chain.ok) throw notFound();
    const view = await viewChain(ref, chain.body, handle.modes, { chats: this.chats });
    if (!view.ok) throw notFound();
    return view.body;
  }

  private async handleOf(taskId: unknown): Promise<Handle> {
    const handle = await this.sealer.open<Handle>("task", this.principal, taskId);
    if (!handle) throw notFound();
    if (Date.now() > handle.at + TTL_MS) throw new RpcError(ErrorCode.InvalidParams, "Task has expired");
    return handle;
  }
}
