import { generateText } from "ai";
import { describe, expect, it } from "vitest";

// wrangler.jsonc aliases @ai-sdk/gateway to src/bundle/no-gateway.ts (and vitest.config.ts does the same), so this is the deployed `ai`.
describe("the AI SDK without the AI Gateway provider", () => {
  it("refuses a model id given as a string, saying why, rather than calling the gateway", async () => {
    await expect(generateText({ model: "openai/gpt-4o", prompt: "hello" })).rejects.toThrow("The AI Gateway provider is not bundled");
  });
});
