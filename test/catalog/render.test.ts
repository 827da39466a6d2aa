import { describe, expect, it } from "vitest";
import { renderBanners, renderLegalDocument, renderPlans, renderPoll } from "../../src/catalog/render";
import { CatalogDocument } from "../../src/catalog/schema";
import { catalogFixture, ids } from "../fixtures/catalog";

const doc = () => CatalogDocument.parse(catalogFixture());

describe("plain field fallback", () => {
  it("uses the requested language when it is authored", () => {
    expect(renderPlans(doc(), "ru").freePlan.title).toBe("Бесплатный");
    expect(renderPlans(doc(), "es").freePlan.title).toBe("Gratis");
  });

  it("falls back to English, then Russian, then Spanish", () => {
    const plans = renderPlans(doc(), "es");
    expect(plans.plans.find((p) => p.id === ids.planB)?.title).toBe("Team"); // es missing -> en
    expect(renderPlans(doc(), "en").freePlan.descriptionLineTwo).toBe("Вторая строка"); // en missing -> ru
    expect(renderLegalDocument(doc().termsOfUse, "ru").contentMarkdown).toBe("# Términos"); // en, ru missing -> es
  });

  it("always carries every suffixed field, empty where not authored", () => {
    const pro = renderPlans(doc(), "en").plans[0]!;
    expect(pro).toMatchObject({ titleEn: "Pro", titleRu: "", titleEs: "" });
    expect(pro.includedSections[0]).toMatchObject({ title: "Chat", contentMarkdown: "**Unlimited**", contentMarkdownRu: "" });
  });

  it("leaves a text that no language has empty", () => {
    const d = doc();
    d.privacyPolicy = { contentMarkdownEn: "", contentMarkdownRu: "", contentMarkdownEs: "", acceptanceUpdateTitle: "" };
    expect(renderLegalDocument(d.privacyPolicy, "es").contentMarkdown).toBe("");
  });
});

describe("filters", () => {
  it("keeps active plans sorted by order and drops archived durations, options and emptied durations", () => {
    const { plans } = renderPlans(doc(), "en");
    expect(plans.map((p) => p.id)).toEqual([ids.planA, ids.planB]);
    expect(plans[0]!.durations.map((d) => d.id)).toEqual(["m1", "m12"]);
    expect(plans[0]!.durations[0]!.creditOptions.map((o) => o.id)).toEqual(["c1"]);
  });

  it("keeps plans with the same order in stored order", () => {
    const d = doc();
    for (const p of d.plans) p.order = 1;
    expect(renderPlans(d, "en").plans.map((p) => p.id)).toEqual([ids.planB, ids.planA]);
  });

  it("drops archived banners and resolves root-relative links against the web application", () => {
    const banners = renderBanners(doc().chatBanners, "ru", "https://app.example");
    expect(banners.map((b) => b.id)).toEqual([ids.bannerChat]);
    expect(banners[0]!.linkUrl).toBe("https://app.example/pricing");
    expect(renderBanners(doc().pageTopBanners, "en", "https://app.example").map((b) => b.linkUrl)).toEqual([""]);
  });

  it("returns a null poll when the questionnaire is disabled, has no definition or is absent", () => {
    const disabled = doc();
    disabled.poll!.definition!.enabled = false;
    expect(renderPoll(disabled, "en")).toEqual({ poll: null });
    const noDefinition = doc();
    noDefinition.poll!.definition = null;
    expect(renderPoll(noDefinition, "en")).toEqual({ poll: null });
    expect(renderPoll({ ...doc(), poll: null }, "en")).toEqual({ poll: null });
  });

  it("localises the questionnaire's questions and options", () => {
    const { poll } = renderPoll(doc(), "ru");
    expect(poll?.definition.title).toBe("Расскажите");
    expect(poll?.definition.questions[0]?.options.map((o) => o.label)).toEqual(["Разработчик", "Other"]);
    expect(poll?.definition.questions[0]?.options[1]?.nextQuestionId).toBe("end");
  });
});
