/**
 * Which hosts a URL the service is handed may lead to, when the service itself will connect there (a
 * webhook receiver, a push notification's URL, an OAuth client's metadata document): one rule for all.
 */

/** Whether a URL host (as the URL parser writes it) is an IP literal, in any notation the parser accepts (it writes 0x7f.1, 2130706433 and 0177.0.0.1 as dotted quads). */
export const isIpLiteral = (host: string): boolean => host.startsWith("[") || ipv4(host) !== undefined;

/** Why a URL host is not a public domain name, or null when it is one: no IP literal, no single label, nothing under a special-use or private suffix. */
export function publicNameProblem(host: string): string | null {
  if (isIpLiteral(host) || host === "localhost") return "an IP address or localhost, not a public domain name";
  if (isNonPublicName(host)) return "a host name that is not public (a single label, or a name under .localhost, .local, .internal or another special-use or private suffix)";
  return null;
}

// Suffixes no public host lives under: special-use names (RFC 6761, 6762, 7686, 8375, 9476) and ones networks use privately.
const NON_PUBLIC_SUFFIXES = ["localhost", "local", "internal", "intranet", "lan", "home", "corp", "private", "localdomain", "arpa", "onion", "alt", "test", "example", "invalid"];

/** Whether a URL host is a name (not an IP literal) that leads to a host nearby rather than a public one: a single label resolves through a search domain. */
function isNonPublicName(host: string): boolean {
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
