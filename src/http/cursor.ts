import { toBase64Url } from "../crypto";

const encoder = new TextEncoder();

// Opaque to clients: which chat it belongs to and the position to continue below.
export function encodeCursor(chatId: string, seq: number): string {
  return toBase64Url(encoder.encode(`${chatId}:${seq}`));
}

/** The position a cursor points at, or undefined when it is malformed or belongs to another chat. */
export function decodeCursor(chatId: string, cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return undefined;
  }
  const match = text.match(/^([0-9a-f-]{36}):([1-9][0-9]{0,15})$/);
  if (!match || match[1] !== chatId) return undefined;
  return Number(match[2]);
}
