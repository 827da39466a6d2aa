import { getOpenApiMetadata } from "@asteasolutions/zod-to-openapi";
import { z } from "@hono/zod-openapi";

type JsonSchema = Record<string, unknown>;
// What the routes' OpenAPI annotations add that a model should see too (the OpenAPI document shows the same).
const DOCUMENTED = ["description", "format", "minLength", "maxLength", "minimum", "maximum", "default"] as const;

/**
 * A tool's JSON Schema from the zod schema a route validates with, carrying the route's OpenAPI
 * annotations; a uuid or date-time says so by its format, without zod's long equivalent pattern.
 */
export function toolJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema & { type: "object" } {
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema }) => {
      const meta = getOpenApiMetadata(zodSchema as never) as JsonSchema;
      const target = jsonSchema as JsonSchema;
      for (const key of DOCUMENTED) if (meta[key] !== undefined && target[key] === undefined) target[key] = meta[key];
      if (target.format === "uuid" || target.format === "date-time") delete target.pattern;
    },
  }) as JsonSchema;
  delete json.$schema;
  return withoutEmptySchemas(singleTypes(json)) as JsonSchema & { type: "object" };
}

/** zod writes a nullable string as `type: ["string", "null"]`; clients that map tools onto single-type dialects (Gemini's OpenAPI subset) refuse that, so it becomes anyOf. */
function singleTypes(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(singleTypes);
  if (typeof node !== "object" || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "type" && Array.isArray(value)) out.anyOf = value.map((type) => ({ type }));
    else out[key] = singleTypes(value);
  }
  return out;
}

/**
 * A map of any JSON (an approval's `input`) comes out as `additionalProperties: {}` with `propertyNames`; strict
 * validators warn of the empty schema, and an object admits any property without it, so both go: `{ "type": "object" }`.
 */
function withoutEmptySchemas(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutEmptySchemas);
  if (typeof node !== "object" || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = withoutEmptySchemas(value);
  const extra = out.additionalProperties;
  if (typeof extra === "object" && extra !== null && Object.keys(extra).length === 0) {
    delete out.additionalProperties;
    delete out.propertyNames;
  }
  return out;
}
