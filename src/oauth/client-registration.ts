import { publicNameProblem } from "../http/public-hosts";

const isLoopback = (host: string) => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
const CLIENT_NAME_MAX = 200;
// Links a registration may carry: kept and never fetched or shown as links, but only where a public site could be.
const LINK_FIELDS = ["logo_uri", "client_uri", "policy_uri", "tos_uri", "jwks_uri"];

/** Plain http to another machine: the one kind of redirect URI the library stores when a compliant one is listed beside it. */
function isRemoteHttp(uri: unknown): boolean {
  if (typeof uri !== "string") return false;
  try {
    const url = new URL(uri);
    return url.protocol === "http:" && !isLoopback(url.hostname);
  } catch {
    return false;
  }
}

/** Why a link field's value is refused: it must be an https URL whose host is a public name. */
function linkProblem(value: unknown): string | null {
  if (typeof value !== "string") return "must be a string";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute https URL";
  }
  if (url.protocol !== "https:") return "must be an https URL";
  const host = publicNameProblem(url.hostname);
  return host ? `must be on a public domain name, not ${host}` : null;
}

export type RegistrationRefusal = { code: "invalid_redirect_uri" | "invalid_client_metadata"; description: string };

/**
 * What a dynamic registration may hold beyond what the library checks: every redirect URI https:, http:
 * on a loopback host, or a private-use scheme (a remote http one is refused even beside good ones); a
 * client_name of at most 200 characters; the link fields only as https URLs on public names (each
 * language variant, `logo_uri#fr`, too).
 */
export function registrationRefusal(metadata: Record<string, unknown>): RegistrationRefusal | undefined {
  const uris = metadata.redirect_uris;
  if (Array.isArray(uris) && uris.some(isRemoteHttp)) {
    return { code: "invalid_redirect_uri", description: "Each redirect URI must be https:, http: on a loopback host, or a private-use scheme." };
  }
  for (const [field, value] of Object.entries(metadata)) {
    const base = field.split("#")[0]!;
    if (base === "client_name" && typeof value === "string" && [...value].length > CLIENT_NAME_MAX) {
      return { code: "invalid_client_metadata", description: `${field} must be at most ${CLIENT_NAME_MAX} characters.` };
    }
    const problem = LINK_FIELDS.includes(base) ? linkProblem(value) : null;
    if (problem) return { code: "invalid_client_metadata", description: `${field} ${problem}.` };
  }
  return undefined;
}
