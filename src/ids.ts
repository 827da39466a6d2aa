import { z } from "@hono/zod-openapi";

/** The ids this service gives out are UUIDs: a path segment that is not one names nothing here. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string has the shape of an id this service gives out (any case). */
export const isUuid = (id: string) => UUID_PATTERN.test(id);

/**
 * A path segment that names one of the service's ids, lowercased as it is parsed. Any string passes,
 * since a segment that is no UUID names nothing here: the route answers 404 for it, as for an unknown id, never 400.
 */
export const PathId = z
  .string()
  .overwrite((id) => id.toLowerCase())
  .openapi({ format: "uuid" });

/** A name-based UUID (version 5, RFC 9562) of a name under a namespace: the same inputs always give the same id. */
export async function nameUuid(namespace: string, name: string): Promise<string> {
  const space = Uint8Array.from(namespace.replaceAll("-", "").match(/../g)!, (h) => Number.parseInt(h, 16));
  const bytes = new TextEncoder().encode(name);
  const input = new Uint8Array(space.length + bytes.length);
  input.set(space);
  input.set(bytes, space.length);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-1", input)).slice(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
