/**
 * The client address a sign-in throttle counts: an IPv6
 * address by its /64, whatever its notation, since one client holds a whole /64; an IPv4-mapped
 * address as its IPv4 address; an IPv4 address as it is. Anything else counts as itself, and a
 * missing address as "unknown" (local dev sends none).
 */
export function throttledAddress(raw: string | undefined): string {
  const text = raw?.trim().toLowerCase() ?? "";
  if (!text) return "unknown";
  const ipv4 = parseIPv4(text);
  if (ipv4) return ipv4.join(".");
  const groups = parseIPv6(text);
  if (!groups) return text;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

function parseIPv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address (with "::", an embedded IPv4 tail, brackets or a zone), or undefined. */
function parseIPv6(text: string): number[] | undefined {
  const address = text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === "") return [];
    const parts = half.split(":");
    const last = parts.at(-1)!;
    const tail = last.includes(".") ? parseIPv4(last) : undefined;
    if (last.includes(".") && !tail) return undefined;
    const hex = tail ? parts.slice(0, -1) : parts;
    if (!hex.every((p) => /^[0-9a-f]{1,4}$/.test(p))) return undefined;
    const groups = hex.map((p) => Number.parseInt(p, 16));
    return tail ? [...groups, (tail[0]! << 8) | tail[1]!, (tail[2]! << 8) | tail[3]!] : groups;
  };
  const head = groupsOf(halves[0]!);
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !rest) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - rest.length;
  return missing >= 1 ? [...head, ...Array<number>(missing).fill(0), ...rest] : undefined;
}
