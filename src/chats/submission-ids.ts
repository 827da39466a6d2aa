import { nameUuid } from "../ids";

// The namespace of submission ids: a name-based UUID of the chat and the idempotency key the submission was sent under.
const SUBMISSION_NAMESPACE = "8d0c5f6e-2b7a-4e91-a3c4-5f1e9b2d7c80";

/**
 * A submission's id, fixed by its chat and its idempotency key (unique in the chat): a channel that sends under a key it
 * derived knows the id before it sends, so it can record where the task is in the same step as it claims the key.
 */
export const submissionIdOf = (chatId: string, idempotencyKey: string): Promise<string> => nameUuid(SUBMISSION_NAMESPACE, `${chatId}/${idempotencyKey}`);
