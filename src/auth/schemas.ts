import { z } from "@hono/zod-openapi";
import { DAY_MS } from "../time";
import { SCOPES } from "./scopes";

const MAX_TOKEN_DAYS = 365;

/** Emails are stored and looked up lower-cased, so addresses are unique case-insensitively. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();
export const Email = z.email().max(320).transform(normaliseEmail);

/** Local development's demo account (npm run dev loads it: scripts/seed-data.mjs). */
export const DEMO_SIGN_IN = { email: "demo@example.com", password: "demo-password" };

// The example is the demo account, so the reference's try-it signs in as it stands there.
export const SignInRequest = z.strictObject({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }).openapi("SignInRequest", { example: DEMO_SIGN_IN });

export const SessionToken = z
  .object({
    token: z.string().openapi({ example: "pcs_…" }),
    tokenType: z.literal("Bearer"),
    expiresAt: z.iso.datetime(),
  })
  .openapi("SessionToken");

const CREDIT_LIMIT_MAX = 1_000_000_000;
/** A ceiling on what the tasks a credential submits may spend; null: none. */
const CreditLimit = z
  .number()
  .int()
  .min(1)
  .max(CREDIT_LIMIT_MAX)
  .nullable()
  .openapi({
    description: `The most credits the tasks of submissions made with this credential may spend (1 to ${CREDIT_LIMIT_MAX}), or null for no limit`,
    example: 100,
  });

/** What the account's lists show of a credential's credits. */
export const CredentialCreditFields = {
  creditLimit: z.number().int().min(1).nullable().openapi({ description: "The credential's credit limit, or null for none" }),
  creditsUsed: z.number().int().min(0).openapi({
    description: "Credits charged for the tasks of submissions made with it, net of refunds (a steering text a running task took costs nothing); within 5 s of a charge",
  }),
};

export const SetCreditLimitRequest = z.strictObject({ creditLimit: CreditLimit }).openapi("SetCreditLimit");

export const CreateApiTokenRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(2)
      .refine((s) => new Set(s).size === s.length, "scopes must not repeat"),
    // Any RFC 3339 date-time (Z or an offset such as +02:00); stored and returned in UTC.
    expiresAt: z.iso
      .datetime({
        offset: true,
        error: (issue) => (issue.input === undefined ? "required" : "must be an RFC 3339 date-time, such as 2030-01-31T12:00:00Z or 2030-01-31T14:00:00+02:00"),
      })
      .transform((t) => new Date(t).toISOString())
      .refine((t) => Date.parse(t) > Date.now(), "must be in the future")
      .refine((t) => Date.parse(t) <= Date.now() + MAX_TOKEN_DAYS * DAY_MS, `must be within the next ${MAX_TOKEN_DAYS} days`)
      .openapi({
        type: "string",
        format: "date-time",
        description: `When the token stops working: any RFC 3339 date-time (stored and returned in UTC), in the future and at most ${MAX_TOKEN_DAYS} days ahead`,
      }),
    creditLimit: CreditLimit.optional(),
  })
  .openapi("CreateApiTokenRequest");

export const ApiTokenItem = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The first 12 characters of the token, to recognise it" }),
    scopes: z.array(z.enum(SCOPES)),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    ...CredentialCreditFields,
  })
  .openapi("ApiTokenItem");

export const CreatedApiToken = z.object({ token: z.string().openapi({ description: "The secret, shown only in this response" }), item: ApiTokenItem }).openapi("CreatedApiToken");

export const ApiTokenList = z.object({ items: z.array(ApiTokenItem) }).openapi("ApiTokenList");
