import { isIpLiteral, isReservedAddress, publicNameProblem } from "../http/public-hosts";

// Where a webhook may point: https anywhere public; http only to a development host while allowed.
const DEVELOPMENT_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
export const WEBHOOK_URL_MAX = 2_000;

/** Why a webhook URL is refused, or null when it may be used. */
export function webhookUrlProblem(raw: string, allowLoopback: boolean): string | null {
  if (raw.length > WEBHOOK_URL_MAX) return `at most ${WEBHOOK_URL_MAX} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not an absolute URL";
  }
  if (url.username || url.password) return "no user name or password in the URL";
  if (raw.includes("#")) return "no fragment";
  const developmentHost = DEVELOPMENT_HOSTS.has(url.hostname);
  if (url.protocol === "http:") {
    if (!developmentHost || !allowLoopback) return "https only (http only for localhost while WEBHOOK_ALLOW_LOOPBACK is true)";
  } else if (url.protocol !== "https:") {
    return "https only";
  }
  if (developmentHost && allowLoopback) return null;
  if (isReservedAddress(url.hostname)) return "a private, loopback, link-local or reserved address";
  // A public IP literal may receive webhooks; a name must be a public one, by the rule every outbound URL follows.
  return isIpLiteral(url.hostname) ? null : publicNameProblem(url.hostname);
}
