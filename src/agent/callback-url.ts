/**
 * Where an external agent calls the service about a task: `result` (and `partial` beside it) or
 * `steering`. Null without a public origin (the http agent then refuses to run).
 */
export function taskCallbackUrl(publicOrigin: string | undefined, chatId: string, taskId: string, call: "result" | "steering"): string | null {
  return publicOrigin ? `${publicOrigin}/agent/chats/${chatId}/tasks/${taskId}/${call}` : null;
}
