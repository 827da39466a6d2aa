import { describe, expect, it } from "vitest";
import { resolveLanguage } from "../../src/catalog/language";

describe("resolveLanguage", () => {
  it.each([
    [undefined, "en"],
    ["", "en"],
    ["ru", "ru"],
    ["es", "es"],
    ["ru-RU", "ru"],
    ["ES-mx", "es"],
    ["de", "en"],
    ["xx-YY", "en"],
    ["*", "en"],
    ["de, ru;q=0.5", "ru"],
    ["en;q=0.4, ru;q=0.9", "ru"],
    ["ru;q=0.8, es;q=0.8", "ru"],
    ["es;q=0.8, ru;q=0.8", "es"],
    ["ru;q=0, es;q=0.1", "es"],
    ["ru;q=abc, es", "es"],
    ["fr-CA, fr;q=0.9, es-ES;q=0.7, *;q=0.5", "es"],
    [" ru ; q=1.0 ", "ru"],
  ])("reads %j as %s", (header, language) => {
    expect(resolveLanguage(header)).toBe(language);
  });

  it("ignores a header too long to be honest past its first kilobyte", () => {
    expect(resolveLanguage(`${"x,".repeat(1000)}ru`)).toBe("en");
  });
});
