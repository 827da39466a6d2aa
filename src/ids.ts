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
