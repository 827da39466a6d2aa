import { z } from "@hono/zod-openapi";

// One schema per shape: the admin document validates with these, the public responses extend them.
const MAX_TEXT = 100_000;
const maxSafe = Number.MAX_SAFE_INTEGER;
const text = z.string().max(MAX_TEXT);
const color = z.string().regex(/^#[0-9a-f]{6}$/, "must be #rrggbb with lowercase hex digits");
const safeCount = z.number().int().min(0).max(maxSafe);
const int32 = z.number().int().min(-2147483648).max(2147483647);

export const LANGUAGES = ["en", "ru", "es"] as const;
export type Language = (typeof LANGUAGES)[number];
const SUFFIXES = ["En", "Ru", "Es"] as const;
type Suffixed<N extends string> = `${N}En` | `${N}Ru` | `${N}Es`;

/** The authored translations of one text field, as the document stores them ("" where not authored). */
function translations<N extends string>(name: N) {
  return Object.fromEntries(SUFFIXES.map((s) => [`${name}${s}`, text.default("")])) as {
    [K in Suffixed<N>]: z.ZodDefault<typeof text>;
  };
}

/** A text field as the public endpoints show it: the plain field in the request language plus every translation. */
function localised<N extends string>(name: N) {
  return Object.fromEntries([name, ...SUFFIXES.map((s) => `${name}${s}`)].map((k) => [k, z.string()])) as {
    [K in N | Suffixed<N>]: z.ZodString;
  };
}

export const AVAILABLE_FUNCTIONS = [
  "canSelectProjectAgentModel",
  "canAccessBuiltInIntegrations",
  "canAccessProjectDiagram",
  "canAccessProjectDatabase",
  "canDeployWithoutServiceBadge",
  "canManageProjectCode",
  "canShareProject",
  "canSetCustomProjectGlobalAgentInstructions",
  "canTransferProjectOwnership",
  "canUseServiceAiGateway",
  "canUseServiceDesktopAppConnector",
  "canUseCustomProjectDomain",
  "canUseServiceProjectDomain",
  "canUseGitHubSynchronization",
  "canUsePlanProjectTemplates",
  "canUseOutboundProxy",
] as const;

const planFields = {
  includedSections: z.array(z.strictObject({ ...translations("title"), ...translations("contentMarkdown") })),
  availableFunctions: z.array(z.enum(AVAILABLE_FUNCTIONS)),
  maxProjects: z.number().int().min(1).max(maxSafe).nullable().default(null),
  maxAppsPerProject: z.number().int().min(1).max(100).nullable().default(null),
  mainColor: z.string().min(1).max(100),
};
const planTexts = { ...translations("title"), ...translations("descriptionLineOne"), ...translations("descriptionLineTwo") };
const freePlanCredits = {
  monthlyCredits: safeCount,
  paidPlanCompletionCredits: safeCount,
  phoneVerificationCredits: safeCount,
  registrationCredits: safeCount,
};

const CreditOptionDocument = z.strictObject({
  id: z.string().min(1).max(200),
  credits: safeCount.nullable(),
  price: safeCount.nullable(),
  isNegotiatedPrice: z.boolean().default(false),
  isArchived: z.boolean().default(false),
});

const DurationDocument = z.strictObject({
  id: z.string().min(1).max(200),
  months: z.number().int().min(1).max(1200),
  creditOptions: z.array(CreditOptionDocument),
  creditAccumulationMonths: z.number().min(0).max(1200).default(0),
  creditsDoNotExpire: z.boolean().default(false),
  isArchived: z.boolean().default(false),
});

const paidPlanFields = {
  id: z.uuid(),
  order: z.number().int().min(1).max(maxSafe),
  isActive: z.boolean(),
  isPopular: z.boolean(),
  creditsDoNotExpire: z.boolean(),
};

const LegalDocumentDocument = z.strictObject({
  ...translations("contentMarkdown"),
  acceptanceUpdateTitle: text.default(""),
});

const BannerStyle = z.strictObject({ backgroundColor: color, textColor: color, weight: int32 });

const bannerFields = {
  id: z.uuid(),
  iconName: z.string().max(200),
  iconColor: color.nullable().default(null),
  openInNewTab: z.boolean(),
  archived: z.boolean().default(false),
};
const httpOrRootRelative = z
  .string()
  .max(2048)
  .refine((v) => /^https?:\/\/[^\s]+$/i.test(v) || /^\/(?!\/)\S*$/.test(v), "must be an http(s) URL or a root-relative path")
  .openapi({ format: "uri-reference" });

const ChatBannerDocument = z.strictObject({
  ...bannerFields,
  ...translations("contentMarkdown"),
  linkUrl: httpOrRootRelative,
  banner: BannerStyle.optional(),
});
const PageTopBannerDocument = z.strictObject({
  ...bannerFields,
  ...translations("contentMarkdown"),
  linkUrl: z.union([z.literal(""), httpOrRootRelative]),
  banner: BannerStyle,
});

const PollOptionDocument = z.strictObject({
  id: z.uuid(),
  ...translations("label"),
  isCustom: z.boolean().default(false),
  nextQuestionId: z.union([z.uuid(), z.literal("end")]).nullable(),
});
const PollQuestionDocument = z.strictObject({
  id: z.uuid(),
  ...translations("title"),
  type: z.enum(["single", "multiple"]),
  options: z.array(PollOptionDocument).min(1),
  nextQuestionId: z.uuid().nullable(),
});
const pollDefinitionFields = {
  iconName: z.string().max(200),
  iconColor: color.nullable().default(null),
  banner: BannerStyle.optional(),
  enabled: z.boolean(),
  bonusCredits: z.number().int().min(0).max(2147483647).nullable(),
  startQuestionId: z.uuid(),
};
const PollDefinitionDocument = z.strictObject({
  ...translations("title"),
  ...translations("previewTitle"),
  ...translations("previewDescription"),
  ...pollDefinitionFields,
  questions: z.array(PollQuestionDocument).min(1),
});

const PollDocument = z.strictObject({
  revision: safeCount,
  completionEpoch: safeCount.optional(),
  definition: PollDefinitionDocument.nullable(),
});

/** What PUT /admin/catalog takes and GET /admin/catalog returns. */
export const CatalogDocument = z
  .strictObject({
    freePlan: z.strictObject({ ...planTexts, ...planFields, ...freePlanCredits }),
    plans: z.array(z.strictObject({ ...paidPlanFields, ...planTexts, ...planFields, durations: z.array(DurationDocument) })),
    privacyPolicy: LegalDocumentDocument,
    termsOfUse: LegalDocumentDocument,
    chatBanners: z.array(ChatBannerDocument),
    pageTopBanners: z.array(PageTopBannerDocument),
    poll: PollDocument.nullable(),
  })
  .superRefine((doc, ctx) => {
    const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: "custom", path, message });
    const duplicates = <T>(items: T[], key: (item: T) => string, path: (i: number) => PropertyKey[], what: string) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        const k = key(item);
        if (seen.has(k)) issue(path(i), `duplicate ${what} id ${k}`);
        seen.add(k);
      });
    };
    duplicates(
      doc.plans,
      (p) => p.id,
      (i) => ["plans", i, "id"],
      "plan",
    );
    doc.plans.forEach((plan, p) => {
      duplicates(
        plan.durations,
        (d) => d.id,
        (d) => ["plans", p, "durations", d, "id"],
        "duration",
      );
      for (const [di, d] of plan.durations.entries()) {
        duplicates(
          d.creditOptions,
          (o) => o.id,
          (o) => ["plans", p, "durations", di, "creditOptions", o, "id"],
          "credit option",
        );
      }
    });
    const banners = [...doc.chatBanners.map((b, i) => ({ b, path: ["chatBanners", i, "id"] })), ...doc.pageTopBanners.map((b, i) => ({ b, path: ["pageTopBanners", i, "id"] }))];
    duplicates(
      banners,
      (x) => x.b.id,
      (i) => banners[i]!.path,
      "banner",
    );
    const definition = doc.poll?.definition;
    if (!definition) return;
    const base = ["poll", "definition"];
    const questionIds = new Set(definition.questions.map((q) => q.id));
    duplicates(
      definition.questions,
      (q) => q.id,
      (i) => [...base, "questions", i, "id"],
      "question",
    );
    const options = definition.questions.flatMap((q, qi) => q.options.map((o, oi) => ({ o, path: [...base, "questions", qi, "options", oi] })));
    duplicates(
      options,
      (x) => x.o.id,
      (i) => [...options[i]!.path, "id"],
      "option",
    );
    if (!questionIds.has(definition.startQuestionId)) issue([...base, "startQuestionId"], "must name a question of the definition");
    definition.questions.forEach((q, qi) => {
      if (q.nextQuestionId !== null && !questionIds.has(q.nextQuestionId)) issue([...base, "questions", qi, "nextQuestionId"], "must name a question of the definition");
    });
    for (const { o, path } of options) {
      if (o.nextQuestionId !== null && o.nextQuestionId !== "end" && !questionIds.has(o.nextQuestionId))
        issue([...path, "nextQuestionId"], 'must name a question of the definition or be "end"');
    }
  });
export type CatalogDocument = z.output<typeof CatalogDocument>;

// ---- public response shapes ----
const publicPlanFields = {
  ...localised("title"),
  ...localised("descriptionLineOne"),
  ...localised("descriptionLineTwo"),
  ...planFields,
  includedSections: z.array(z.object({ ...localised("title"), ...localised("contentMarkdown") })),
};

export const PlanCatalog = z
  .object({
    freePlan: z.object({ ...publicPlanFields, ...freePlanCredits }),
    plans: z.array(z.object({ ...paidPlanFields, ...publicPlanFields, durations: z.array(DurationDocument.loose()) })),
  })
  .openapi("PlanCatalog");

export const LegalDocument = z.strictObject({ ...localised("contentMarkdown"), acceptanceUpdateTitle: z.string() }).openapi("LegalDocument");

export const ChatBanner = ChatBannerDocument.extend(localised("contentMarkdown")).openapi("ChatBanner");
export const PageTopBanner = PageTopBannerDocument.extend(localised("contentMarkdown")).openapi("PageTopBanner");

const PollQuestion = PollQuestionDocument.extend({
  ...localised("title"),
  options: z.array(PollOptionDocument.extend(localised("label"))),
});
export const PollResponse = z
  .object({
    poll: z
      .object({
        revision: safeCount,
        completionEpoch: safeCount.optional(),
        definition: z
          .strictObject({
            ...localised("title"),
            ...localised("previewTitle"),
            ...localised("previewDescription"),
            ...pollDefinitionFields,
            questions: z.array(PollQuestion),
          })
          .nullable(),
      })
      .nullable(),
  })
  .openapi("PollResponse");
