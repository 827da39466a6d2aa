import { and, desc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { chatIndex } from "../db/schema";
import type { Chat } from "./schemas";

/** Writes a chat's summary unless the index already holds a newer version of it. */
export async function upsertChatIndex(d1: D1Database, projectId: string, chat: Chat, version: number): Promise<void> {
  const row = {
    id: chat.id,
    projectId,
    title: chat.title,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
    archivedAt: chat.archivedAt,
    lastMessageAt: chat.lastMessageAt,
    latestAgentPreview: chat.latestAgentPreview,
    isWorking: chat.isWorking,
    isAwaitingUser: chat.isAwaitingUser,
    queuedCount: chat.queuedCount,
    version,
  };
  const { id: _id, projectId: _p, createdAt: _c, ...changes } = row;
  await drizzle(d1)
    .insert(chatIndex)
    .values(row)
    .onConflictDoUpdate({ target: chatIndex.id, set: changes, setWhere: sql`${chatIndex.version} < excluded.version` })
    .run();
}

/** A project's chats, newest updatedAt first: active ones, or archived ones. */
export async function listChats(d1: D1Database, projectId: string, archived: boolean): Promise<Chat[]> {
  const rows = await drizzle(d1)
    .select()
    .from(chatIndex)
    .where(and(eq(chatIndex.projectId, projectId), archived ? isNotNull(chatIndex.archivedAt) : isNull(chatIndex.archivedAt)))
    .orderBy(desc(chatIndex.updatedAt), desc(chatIndex.id));
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    archivedAt: r.archivedAt,
    lastMessageAt: r.lastMessageAt,
    latestAgentPreview: r.latestAgentPreview,
    isAwaitingUser: r.isAwaitingUser,
    isWorking: r.isWorking,
    queuedCount: r.queuedCount,
  }));
}
