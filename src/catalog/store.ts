import { asc } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { BatchItem } from "drizzle-orm/batch";
import * as t from "../db/schema";
import type { CatalogDocument } from "./schema";

const ALL_TABLES = [t.pollOptions, t.pollQuestions, t.polls, t.banners, t.legalDocuments, t.planCreditOptions, t.planDurations, t.paidPlans, t.freePlan];

/** Replaces the stored catalog in one D1 batch, which runs as a single transaction. */
export async function replaceCatalog(d1: D1Database, doc: CatalogDocument): Promise<void> {
  const db = drizzle(d1);
  // One row per statement: D1 caps bound parameters per statement at 100.
  const writes: BatchItem<"sqlite">[] = ALL_TABLES.map((table) => db.delete(table));
  writes.push(db.insert(t.freePlan).values({ id: 1, ...doc.freePlan }));
  doc.plans.forEach(({ durations, ...plan }, position) => {
    writes.push(db.insert(t.paidPlans).values({ ...plan, position }));
    durations.forEach(({ creditOptions, ...duration }, dPosition) => {
      writes.push(db.insert(t.planDurations).values({ ...duration, planId: plan.id, position: dPosition }));
      for (const [oPosition, option] of creditOptions.entries()) {
        writes.push(db.insert(t.planCreditOptions).values({ ...option, planId: plan.id, durationId: duration.id, position: oPosition }));
      }
    });
  });
  writes.push(db.insert(t.legalDocuments).values({ kind: "privacy_policy", ...doc.privacyPolicy }));
  writes.push(db.insert(t.legalDocuments).values({ kind: "terms_of_use", ...doc.termsOfUse }));
  const placed = [...doc.chatBanners.map((b) => ({ ...b, placement: "chat" as const })), ...doc.pageTopBanners.map((b) => ({ ...b, placement: "page_top" as const }))];
  for (const [position, { banner, ...b }] of placed.entries()) writes.push(db.insert(t.banners).values({ ...b, ...banner, position }));
  if (doc.poll) {
    const { definition, revision, completionEpoch } = doc.poll;
    const { questions, banner, ...header } = definition ?? {};
    writes.push(db.insert(t.polls).values({ id: 1, revision, completionEpoch, hasDefinition: definition !== null, ...header, ...banner }));
    (questions ?? []).forEach(({ options, ...question }, position) => {
      writes.push(db.insert(t.pollQuestions).values({ ...question, position }));
      for (const [oPosition, option] of options.entries()) writes.push(db.insert(t.pollOptions).values({ ...option, questionId: question.id, position: oPosition }));
    });
  }
  await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}

const style = (row: { backgroundColor: string | null; textColor: string | null; weight: number | null }) =>
  row.backgroundColor !== null && row.textColor !== null && row.weight !== null
    ? { banner: { backgroundColor: row.backgroundColor, textColor: row.textColor, weight: row.weight } }
    : {};

/** Reads the whole stored catalog, or null when none has been loaded yet. */
export async function readCatalog(d1: D1Database): Promise<CatalogDocument | null> {
  const db = drizzle(d1);
  const [free, plans, durations, options, legal, banners, polls, questions, pollOptions] = await db.batch([
    db.select().from(t.freePlan),
    db.select().from(t.paidPlans).orderBy(asc(t.paidPlans.position)),
    db.select().from(t.planDurations).orderBy(asc(t.planDurations.position)),
    db.select().from(t.planCreditOptions).orderBy(asc(t.planCreditOptions.position)),
    db.select().from(t.legalDocuments),
    db.select().from(t.banners).orderBy(asc(t.banners.position)),
    db.select().from(t.polls),
    db.select().from(t.pollQuestions).orderBy(asc(t.pollQuestions.position)),
    db.select().from(t.pollOptions).orderBy(asc(t.pollOptions.position)),
  ]);
  const freeRow = free[0];
  if (!freeRow) return null;
  const { id: _freeId, ...freePlan } = freeRow;
  const legalDoc = (kind: "privacy_policy" | "terms_of_use") => {
    const { kind: _kind, ...rest } = legal.find((d) => d.kind === kind) ?? { kind, contentMarkdownEn: "", contentMarkdownRu: "", contentMarkdownEs: "", acceptanceUpdateTitle: "" };
    return rest;
  };
  const banner = ({ placement: _p, position: _pos, backgroundColor, textColor, weight, ...b }: (typeof banners)[number]) => ({
    ...b,
    ...style({ backgroundColor, textColor, weight }),
  });
  const pollRow = polls[0];
  return {
    freePlan,
    plans: plans.map(({ position: _pos, ...plan }) => ({
      ...plan,
      durations: durations
        .filter((d) => d.planId === plan.id)
        .map(({ planId: _plan, position: _dp, ...duration }) => ({
          ...duration,
          creditOptions: options.filter((o) => o.planId === plan.id && o.durationId === duration.id).map(({ planId: _op, durationId: _od, position: _oPos, ...option }) => option),
        })),
    })),
    privacyPolicy: legalDoc("privacy_policy"),
    termsOfUse: legalDoc("terms_of_use"),
    chatBanners: banners.filter((b) => b.placement === "chat").map(banner),
    pageTopBanners: banners.filter((b) => b.placement === "page_top").map(banner) as CatalogDocument["pageTopBanners"],
    poll: pollRow ? toPoll(pollRow, questions, pollOptions) : null,
  };
}

function toPoll(row: typeof t.polls.$inferSelect, questions: (typeof t.pollQuestions.$inferSelect)[], options: (typeof t.pollOptions.$inferSelect)[]): CatalogDocument["poll"] {
  const { id: _id, revision, completionEpoch, hasDefinition, backgroundColor, textColor, weight, ...header } = row;
  const definition = hasDefinition
    ? {
        ...header,
        ...style({ backgroundColor, textColor, weight }),
        questions: questions.map(({ position: _pos, ...q }) => ({
          ...q,
          options: options.filter((o) => o.questionId === q.id).map(({ questionId: _q, position: _oPos, ...o }) => ({ ...o, nextQuestionId: o.nextQuestionId })),
        })),
      }
    : null;
  return { revision, ...(completionEpoch === null ? {} : { completionEpoch }), definition } as CatalogDocument["poll"];
}
