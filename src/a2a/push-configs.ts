import type { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { PushNotificationNotSupportedError } from "@a2a-js/sdk/errors";
import type { NewPushConfig, PushConfigOutcome, PushConfigView } from "../chats/room-calls";
import type { Env } from "../env";
import { webhookKey } from "../webhooks/delivery";
import type { PushSecrets } from "../webhooks/push-delivery";
import { encryptSecret } from "../webhooks/secrets";
import { webhookUrlProblem } from "../webhooks/url-rules";
import { invalid, malformed, taskNotFound, unsupported } from "./errors";

const TOKEN_MIN = 16;
const TOKEN_MAX = 256;
const CREDENTIALS_MAX = 4096;
const CONFIG_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SCHEMES = /^(bearer|basic)$/i;
// What a header carries as it is, which no runtime rewrites, garbles or logs: a token visible ASCII, credentials that or a space.
const TOKEN_CHARACTERS = /^[\x21-\x7E]*$/;
const CREDENTIALS_CHARACTERS = /^[\x20-\x7E]*$/;

/** Whether this deployment can keep push configs: their secrets are sealed with WEBHOOK_KEY, as webhook secrets are. */
export const canPush = (env: Env) => webhookKey(env) !== undefined;

/**
 * A config as sent (the SDK's shape: absent strings are empty) checked field by field (-32602 naming the field), with
 * its token and credentials sealed: the chat keeps only the sealed text and never gives them back.
 */
export async function pushConfigOf(sent: TaskPushNotificationConfig, env: Env, protocol: NewPushConfig["protocol"]): Promise<NewPushConfig> {
  const key = webhookKey(env);
  if (!key) throw new PushNotificationNotSupportedError({ message: "Push notifications need WEBHOOK_KEY on this deployment." });
  const urlProblem = webhookUrlProblem(sent.url, env.WEBHOOK_ALLOW_LOOPBACK === "true");
  if (urlProblem) throw invalid("url", sent.url === "" ? "is required." : `is refused: ${urlProblem}.`);
  if (sent.id !== "" && !CONFIG_ID.test(sent.id)) throw invalid("id", "must be 1 to 64 of A-Z, a-z, 0-9, _ and -.");
  if (sent.token !== "" && (sent.token.length < TOKEN_MIN || sent.token.length > TOKEN_MAX)) throw invalid("token", `must be ${TOKEN_MIN} to ${TOKEN_MAX} characters.`);
  if (!TOKEN_CHARACTERS.test(sent.token)) throw invalid("token", "must be visible ASCII characters only (0x21 to 0x7E), as a header carries them.");
  const auth = sent.authentication;
  const scheme = auth && (auth.scheme !== "" || auth.credentials !== "") ? auth.scheme : null;
  if (scheme !== null && !SCHEMES.test(scheme)) throw invalid("authentication.scheme", 'must be "Bearer" or "Basic".');
  if (scheme !== null && (auth!.credentials.length < 1 || auth!.credentials.length > CREDENTIALS_MAX)) {
    throw invalid("authentication.credentials", `must be 1 to ${CREDENTIALS_MAX} characters.`);
  }
  if (scheme !== null && !CREDENTIALS_CHARACTERS.test(auth!.credentials)) {
    throw invalid("authentication.credentials", "must be visible ASCII characters or spaces only, as a header carries them.");
  }
  const secrets: PushSecrets = {
    ...(sent.token === "" ? {} : { token: sent.token }),
    ...(scheme === null ? {} : { credentials: auth!.credentials }),
  };
  const sealed = Object.keys(secrets).length === 0 ? null : await encryptSecret(JSON.stringify(secrets), key);
  return { id: sent.id || crypto.randomUUID(), url: sent.url, scheme, sealed, hasToken: sent.token !== "", protocol };
}

/** A config as Get and List show it: its id, task, URL and scheme; never its token or credentials. */
export const shownConfig = (config: PushConfigView): TaskPushNotificationConfig => ({
  tenant: "",
  id: config.id,
  taskId: config.taskId,
  url: config.url,
  token: "",
  authentication: config.scheme === null ? undefined : { scheme: config.scheme, credentials: "" },
});

/** What the chat answered, or the A2A error it means. */
export function pushOutcome<K extends PushConfigOutcome["kind"]>(outcome: PushConfigOutcome, expected: K): Extract<PushConfigOutcome, { kind: K }> {
  if (outcome.kind === expected) return outcome as Extract<PushConfigOutcome, { kind: K }>;
  switch (outcome.kind) {
    case "task_limit":
      throw malformed("A task has at most 5 push configs: delete one first.");
    case "project_limit":
      throw malformed("A project has at most 100 push configs across its tasks that have not ended.");
    case "ended":
      throw unsupported("The task has ended: it takes no push configs.");
    default:
      throw taskNotFound();
  }
}
