import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { StreamEvent } from "../sse";
import type { ChatRoom } from "../../src/chats/room/chat-room";
import { Message, SubmissionState } from "../../src/chats/schemas";
import { call, chatsPath, peek, room, type World } from "../helpers";

/** The calls of the control issue, as a client makes them. */
export const stop = (w: World, chatId: string, messageId: string, token = w.token, options: { body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {}) =>
  call("POST", `${chatsPath(w)}/${chatId}/messages/${messageId}/stop`, { token, ...options });
export const cancel = (w: World, chatId: string, submissionId: string, token = w.token) => call("DELETE", `${chatsPath(w)}/${chatId}/queue/${submissionId}`, { token });
export const steer = (w: World, chatId: string, content: string, key: string = crypto.randomUUID(), token = w.token) =>
  call("POST", `${chatsPath(w)}/${chatId}/steer`, { token, headers: { "idempotency-key": key }, body: { content } });
export const submissionOf = async (w: World, chatId: string, submissionId: string) => {
  const r = await call("GET", `${chatsPath(w)}/${chatId}/submissions/${submissionId}`, { token: w.token });
  return { ...r, state: r.status === 200 ? SubmissionState.parse(r.json) : undefined };
};
export const stopped = (r: { json: unknown }) => Message.parse(r.json);

/** The chat's working reply (newest first in the history), read from its object. */
export async function workingReply(w: World, chatId: string) {
  const reply = (await peek(w, chatId)).find((m) => m.role === "owner" && m.status === "working");
  if (!reply) throw new Error("no working reply");
  return reply;
}

/** Runs SQL in the chat's object, for checks that look under the API. */
export const sql = <T extends Record<string, SqlStorageValue>>(chatId: string, query: string, ...bindings: unknown[]) =>
  runInDurableObject(room(chatId), (_: ChatRoom, state) => state.storage.sql.exec<T>(query, ...bindings).toArray());

/** The queue a follower holds: the snapshot's, with each entry event after it applied in order, each entry placed before the one its `before` names. */
export function followerQueue(events: StreamEvent[]) {
  const snapshot = events.find((e) => e.type === "snapshot")!;
  const queue: { id: string; status: string; content: string }[] = [...snapshot.data.queue.items];
  for (const e of events.filter((x) => x.id > snapshot.id)) {
    const at = queue.findIndex((entry) => entry.id === e.data.id);
    if ((e.type === "queue.entry" || e.type === "queue.removed") && at >= 0) queue.splice(at, 1);
    if (e.type !== "queue.entry") continue;
    const { before, ...entry } = e.data;
    const next = before === null ? -1 : queue.findIndex((x) => x.id === before);
    expect(before === null || next >= 0, `queue.entry ${entry.id} names an entry the follower holds`).toBe(true);
    queue.splice(next < 0 ? queue.length : next, 0, entry);
  }
  return queue;
}
