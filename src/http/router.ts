import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { validationHook } from "./problem";

/** A sub-router whose validation failures produce the same problem+json as every other error. */
export const createRouter = <E extends AppEnv = AppEnv>() => new OpenAPIHono<E>({ defaultHook: validationHook });

export const problemContent = {
  "application/problem+json": {
    schema: {
      type: "object" as const,
      required: ["type", "title", "status", "detail", "code"],
      properties: {
        type: { type: "string" as const },
        title: { type: "string" as const },
        status: { type: "integer" as const },
        detail: { type: "string" as const },
        code: { type: "string" as const },
        errors: { type: "array" as const, items: { type: "object" as const, properties: { path: { type: "string" as const }, message: { type: "string" as const } } } },
      },
    },
  },
};

/** A required JSON request body; "required" also makes the validator refuse a missing or non-JSON body. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

/** A JSON response entry for the OpenAPI document. */
export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

/** OpenAPI response entries for the problem statuses a route can answer. */
export function problems(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, { description: "Problem details (RFC 9457)", content: problemContent }]));
}
