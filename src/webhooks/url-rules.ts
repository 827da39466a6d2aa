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
  if (isNonPublicName(url.hostname))
    return "a host name that is not public (a single label, or a name under .localhost, .local, .internal or another special-use or private suffix)";
  return null;
}

// Suffixes no public receiver lives under: special-use names (RFC 6761, 6762, 7686, 8375, 9476) and ones networks use privately.
const NON_PUBLIC_SUFFIXES = ["localhost", "local", "internal", "intranet", "lan", "home", "corp", "private", "localdomain", "arpa", "onion", "alt", "test", "example", "invalid"];

/** Whether a URL host is a name (not an IP literal) that leads to a host nearby rather than a public one: a single label resolves through a search domain. */
export function isNonPublicName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name.startsWith("[") || ipv4(name)) return false;
  if (!name.includes(".")) return true;
  return NON_PUBLIC_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
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
    (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a! >= 224
  );
}

/** The eight 16-bit groups of an IPv6 address as the URL parser writes it (no zone; "::" expanded). */
function groupsOf(address: string): number[] | undefined {
  const [head, tail, extra] = address.toLowerCase().split("::");
  if (extra !== undefined) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const [before, after] = [parse(head), parse(tail)];
  const groups = tail === undefined ? before : [...before, ...new Array(8 - before.length - after.length).fill(0), ...after];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];

function reservedV6(address: string): boolean {
  const g = groupsOf(address);
  if (!g) return true;
  const [a, b] = [g[0]!, g[1]!];
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // IPv4 inside IPv6: compatible (::a.b.c.d), mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), 6to4 (2002:ab:cd::), NAT64 (64:ff9b::).
  if (zeroUpTo(6)) return g[6] === 0 && g[7]! <= 1 ? true : reservedV4(v4Of(g[6]!, g[7]!));
  if (zeroUpTo(5) && g[5] === 0xffff) return reservedV4(v4Of(g[6]!, g[7]!));
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return reservedV4(v4Of(g[6]!, g[7]!));
  if (a === 0x2002) return reservedV4(v4Of(b, g[2]!));
  if (a === 0x64 && b === 0xff9b) return true;
  return (
    (a & 0xe000) !== 0x2000 || // outside global unicast 2000::/3: unique local, link-local, site-local, multicast, discard, reserved
    (a === 0x2001 && b < 0x200) || // 2001::/23: Teredo, benchmarking, ORCHID and other special purposes
    (a === 0x2001 && b === 0xdb8) || // documentation
    (a === 0x3fff && b < 0x1000) // documentation 3fff::/20
  );
}
