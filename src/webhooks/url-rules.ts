// Where a webhook may point (CONTRACT "Webhooks"): https anywhere public; http only to a development host while allowed.
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
  return null;
}

/** Whether a URL host is an IP literal in a range the public internet does not route to a receiver. */
export function isReservedAddress(host: string): boolean {
  if (host === "localhost") return true;
  const v4 = ipv4(host);
  if (v4) return reservedV4(v4);
  if (host.startsWith("[") && host.endsWith("]")) return reservedV6(host.slice(1, -1));
  return false;
}

function ipv4(host: string): number[] | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((b) => b <= 255) ? bytes : undefined;
}

function reservedV4([a, b, c]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a! >= 224
  );
}

function reservedV6(address: string): boolean {
  const lower = address.toLowerCase();
  // The URL parser writes an IPv4-mapped address as ::ffff:xxxx:xxxx.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
    return reservedV4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  }
  if (lower === "::" || lower === "::1") return true;
  const first = parseInt(lower.split(":")[0] || "0", 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 || // multicast
    lower.startsWith("2001:db8:") || // documentation
    lower.startsWith("64:ff9b:") // NAT64 embeds an IPv4 address
  );
}
