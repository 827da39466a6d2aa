import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { chatIndex } from "../../db/schema";
import { primary } from "../../db/sessions";
import type { Chat } from "../schemas";

/**
 * What D1's chat_index held of a project's chats before chat lists moved to ProjectChats objects,
 * with each summary's version. Read from the primary, once per project.
 */
export async function readChatListToMove(d1: D1Database, projectId: string): Promise<{ chat: Chat; version: number }[]> {
  const rows = await drizzle(primary(d1)).select().from(chatIndex).where(eq(chatIndex.projectId, projectId));
  return rows.map((r) => ({
    version: r.version,
    chat: {
      id: r.id,
      title: r.title,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      archivedAt: r.archivedAt,
      lastMessageAt: r.lastMessageAt,
      latestAgentPreview: r.latestAgentPreview,
      isAwaitingUser: r.isAwaitingUser,
      // Its question's id is the chat's to tell, when it next sends its summary.
      pendingQuestionId: null,
      isWorking: r.isWorking,
      queuedCount: r.queuedCount,
      // Forks came after the lists moved.
      forkedFrom: null,
    },
  }));
}
