import { z } from "@hono/zod-openapi";
import { pageQuery } from "../http/query";

export const ProjectCredits = z
  .object({
    balance: z.number().int().min(0).nullable().openapi({
      description: "The balance of the account that pays for the project's tasks (its owner); null unless you are the owner, as it moves with the owner's other projects",
    }),
    taskCost: z.number().int().min(0).openapi({ description: "What one task costs now" }),
    canRun: z
      .boolean()
      .openapi({ description: "Whether a message sent now with this credential can start: the paying account has at least taskCost, and the credential's limit leaves it" }),
    credential: z
      .object({
        creditLimit: z.number().int().min(1).nullable().openapi({ description: "The calling token's (or OAuth grant's) credit limit, or null for none" }),
        creditsUsed: z.number().int().min(0).openapi({ description: "Credits its submissions' tasks were charged, net of refunds" }),
      })
      .openapi({ description: "The credential making this call" }),
  })
  .openapi("ProjectCredits");

const StatementItem = z
  .object({
    id: z.uuid(),
    kind: z.string().openapi({
      description: "`charge` (credits negative), `refund`, or `adjustment` (an operator's change or the opening balance); accept other kinds too",
      examples: ["charge", "refund", "adjustment"],
    }),
    credits: z.number().int().openapi({ description: "The signed change of the balance" }),
    balanceAfter: z.number().int().min(0),
    projectId: z.uuid().nullable(),
    chatId: z.uuid().nullable(),
    submissionId: z.uuid().nullable(),
    createdAt: z.iso.datetime(),
  })
  .openapi("StatementItem");

export const AccountCredits = z
  .object({
    balance: z.number().int().min(0),
    items: z.array(StatementItem).openapi({ description: "Newest first; kept at least 90 days, the newest always (its balanceAfter is the balance)" }),
    nextCursor: z.string().nullable().openapi({ description: "Opaque; send it as cursor for the next, older page; null on the last page" }),
  })
  .openapi("AccountCredits");

export const StatementQuery = pageQuery("entries");

const UsageDay = z
  .object({
    date: z.iso.date().openapi({ description: "The UTC day on which these tasks ended" }),
    tasks: z.number().int().min(0),
    credits: z.number().int().min(0),
    inputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
  })
  .openapi("UsageDay");

export const ProjectUsage = z
  .object({ items: z.array(UsageDay).openapi({ description: "Oldest first; one item per UTC day on which at least one of the project's tasks ended" }) })
  .openapi("ProjectUsage");

const day = (what: string) => z.iso.date({ message: `${what} must be a calendar date YYYY-MM-DD` }).optional();
export const UsageQuery = z.strictObject({
  from: day("from").openapi({ description: "The first UTC day, inclusive; 29 days before `to` when absent" }),
  to: day("to").openapi({ description: "The last UTC day, inclusive; today when absent; at most 365 days after `from`" }),
});
