import { sha256, toHex } from "../crypto";

/** A strong validator of a body: the first 128 bits of its SHA-256, quoted. */
export async function strongEtag(body: string): Promise<string> {
  return `"${toHex((await sha256(body)).subarray(0, 16))}"`;
}

/** RFC 9110 If-None-Match: weak comparison, a list of tags, or "*". */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}
