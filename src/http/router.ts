import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../env";
import { headers, type HeaderName } from "./openapi-components";
import { validationHook } from "./problem";

export { headers, ifNoneMatch, notModified, problems } from "./openapi-components";

/** A sub-router whose validation failures produce the same problem+json as every other error. */
export const createRouter = <E extends AppEnv = AppEnv>() => new OpenAPIHono<E>({ defaultHook: validationHook });

/** An operation anyone may call: the explicit empty requirement tells generators to send no credentials. */
export const anonymous: Record<string, string[]>[] = [];

/** A required JSON request body; "required" also makes the validator refuse a missing or non-JSON body. */
export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({ required: true, description, content: { "application/json": { schema } } });

/** A JSON response entry for the OpenAPI document, with the headers it carries besides x-request-id. */
export const jsonResponse = <T extends z.ZodType>(schema: T, description: string, ...headerNames: HeaderName[]) => ({
  description,
  ...(headerNames.length ? { headers: headers(...headerNames) } : {}),
  content: { "application/json": { schema } },
});

/** JSON text of a T, serialised elsewhere (a Durable Object's prebuilt list) and sent as it is. */
export type JsonText<T> = string & { readonly __jsonOf?: T };

/** Answers JSON text as the typed JSON response it is, without parsing and serialising it again. */
export const jsonText = <T, S extends ContentfulStatusCode>(c: Context, text: JsonText<T>, status: S, headers: Record<string, string> = {}) =>
  c.body(text, status, { ...headers, "content-type": "application/json" }) as unknown as Response & TypedResponse<T, S, "json">;
