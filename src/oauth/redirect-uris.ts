const isLoopback = (host: string) => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);

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

/**
 * What a registration may list (CONTRACT "Connecting hosted AI clients"): https:, http: on a loopback
 * host, or a private-use scheme, every one of them. The library refuses the rest (no URI, a dangerous
 * scheme, a fragment); this adds that a remote http: URI is refused even beside good ones.
 */
export const allRedirectUrisAllowed = (uris: unknown): boolean => !Array.isArray(uris) || !uris.some(isRemoteHttp);
