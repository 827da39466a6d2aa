/** Where an external agent delivers a task's result; null without a public origin (the http agent then refuses to run). */
export function taskCallbackUrl(publicOrigin: string | undefined, chatId: string, taskId: string): string | null {
  return publicOrigin ? `${publicOrigin}/agent/chats/${chatId}/tasks/${taskId}/result` : null;
}
