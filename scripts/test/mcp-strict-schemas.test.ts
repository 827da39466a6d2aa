import { mcpToFunctionTool } from "@openai/agents-core";
import { describe, expect, it } from "vitest";
import { toolJsonSchema } from "../../src/mcp/json-schema";
import { TOOLS } from "../../src/mcp/tools";

// What the OpenAI Agents SDK does with an MCP server's tools when asked for strict schemas (convertSchemasToStrict):
// a schema it cannot make strict falls back to non-strict with a warning, which is what this guards against.
const server = { name: "project-chat", cacheToolsList: false, invalidateToolsCache: async () => {}, callTool: async () => [] } as never;

describe("the MCP tools' schemas under the SDKs' own converters", () => {
  it("every tool's input schema converts to OpenAI strict mode", () => {
    for (const t of TOOLS) {
      const converted = mcpToFunctionTool({ name: t.name, description: t.description, inputSchema: toolJsonSchema(t.input, "input") } as never, server, true) as {
        strict: boolean;
      };
      expect(converted.strict, t.name).toBe(true);
    }
  });
});
