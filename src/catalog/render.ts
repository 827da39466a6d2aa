import type { CatalogDocument, Language } from "./schema";

const FALLBACK: Record<Language, readonly Language[]> = {
  en: ["en", "ru", "es"],
  ru: ["ru", "en", "es"],
  es: ["es", "en", "ru"],
};
const SUFFIX: Record<Language, "En" | "Ru" | "Es"> = { en: "En", ru: "Ru", es: "Es" };

/** Adds the plain field for each name: the requested language, else en, ru, es, first non-empty. */
function localise<T extends object, N extends string>(item: T, language: Language, names: readonly N[]): Record<N, string> & T {
  const source = item as Record<string, unknown>;
  const plain = {} as Record<N, string>;
  for (const name of names) {
    const texts = FALLBACK[language].map((l) => source[`${name}${SUFFIX[l]}`]);
    plain[name] = (texts.find((v) => typeof v === "string" && v !== "") as string | undefined) ?? "";
  }
  return { ...plain, ...item };
}

type PlanLike = Pick<CatalogDocument["freePlan"], "includedSections">;
const localisePlan = <P extends PlanLike>(plan: P, language: Language) => ({
  ...localise(plan, language, ["title", "descriptionLineOne", "descriptionLineTwo"]),
  includedSections: plan.includedSections.map((s) => localise(s, language, ["title", "contentMarkdown"])),
});

export function renderPlans(doc: CatalogDocument, language: Language) {
  const plans = doc.plans
    .filter((p) => p.isActive)
    .map((p, position) => ({ p, position }))
    .sort((a, b) => a.p.order - b.p.order || a.position - b.position)
    .map(({ p }) => ({
      ...localisePlan(p, language),
      durations: p.durations
        .filter((d) => !d.isArchived)
        .map((d) => ({ ...d, creditOptions: d.creditOptions.filter((o) => !o.isArchived) }))
        .filter((d) => d.creditOptions.length > 0),
    }));
  return { freePlan: localisePlan(doc.freePlan, language), plans };
}

export const renderLegalDocument = (document: CatalogDocument["privacyPolicy"], language: Language) => localise(document, language, ["contentMarkdown"]);

/** Root-relative links point into the web application, not at whoever embeds the banner. */
function resolveLink(linkUrl: string, appOrigin: string): string {
  return linkUrl.startsWith("/") ? new URL(linkUrl, appOrigin).toString() : linkUrl;
}

export function renderBanners<B extends CatalogDocument["chatBanners"][number]>(banners: B[], language: Language, appOrigin: string) {
  return banners.filter((b) => !b.archived).map((b) => ({ ...localise(b, language, ["contentMarkdown"]), linkUrl: resolveLink(b.linkUrl, appOrigin) }));
}

export function renderPoll(doc: CatalogDocument, language: Language) {
  const definition = doc.poll?.definition;
  if (!doc.poll || !definition?.enabled) return { poll: null };
  return {
    poll: {
      ...doc.poll,
      definition: {
        ...localise(definition, language, ["title", "previewTitle", "previewDescription"]),
        questions: definition.questions.map((q) => ({
          ...localise(q, language, ["title"]),
          options: q.options.map((o) => localise(o, language, ["label"])),
        })),
      },
    },
  };
}
