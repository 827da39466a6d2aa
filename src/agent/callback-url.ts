import type { Env } from "../env";

/** The service's public origin (PUBLIC_URL): configuration only, never a request's Host, which a client can forge. */
export function publicOrigin(env: Pick<Env, "PUBLIC_URL">): string | undefined {
  if (!env.PUBLIC_URL) return undefined;
  try {
    const url = new URL(env.PUBLIC_URL);
    return url.protocol === "https:" || url.protocol === "http:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** Where an external agent delivers a task's result; null without a PUBLIC_URL (the http agent then refuses to run). */
export function taskCallbackUrl(env: Pick<Env, "PUBLIC_URL">, chatId: string, taskId: string): string | null {
  const origin = publicOrigin(env);
  return origin ? `${origin}/agent/chats/${chatId}/tasks/${taskId}/result` : null;
}
