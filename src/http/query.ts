import { z } from "@hono/zod-openapi";

/** A page-size query parameter: decimal digits only (Number() would also take 0x10, 1e1, +5 and 5.0), then the range. */
export const pageSize = (name: string, { max, fallback }: { max: number; fallback: number }) =>
  z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a decimal integer`)
    .transform(Number)
    .pipe(z.number().int().min(1, `${name} must be 1 to ${max}`).max(max, `${name} must be 1 to ${max}`))
    .default(fallback)
    .openapi({ type: "integer", minimum: 1, maximum: max, default: fallback });

/** The query of a page of a list read newest first: an opaque cursor from the previous page and a page size. */
export const pageQuery = (items: string) =>
  z.strictObject({
    cursor: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: `Opaque: pass the nextCursor of the previous page unchanged to get older ${items}; any other value is refused with 400` }),
    limit: pageSize("limit", { max: 100, fallback: 50 }),
  });
