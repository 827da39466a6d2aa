import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_getVarsForDev, unstable_readConfig } from "wrangler";

const configPath = "./wrangler.jsonc";

/**
 * The plugin builds each Worker through wrangler, which lays a developer's .dev.vars (or .env) over the
 * configuration's vars. Every name found there is set back to its configured value, or to "" (unset for
 * config()), so a local AGENT_MODE=openai never reaches a test; each project then pins its own vars.
 */
function withoutLocalVars(): Record<string, unknown> {
  const declared: Record<string, unknown> = unstable_readConfig({ config: configPath }).vars;
  const local = unstable_getVarsForDev(configPath, undefined, {}, undefined, true);
  return Object.fromEntries(Object.keys(local).map((name) => [name, declared[name] ?? ""]));
}

// Seals MCP task handles and the like in every project (32 bytes as base64url, as the var must be).
const TEST_MCP_STATE_KEY = "dGVzdC1tY3Atc3RhdGUta2V5LTMyLWJ5dGVzLWxvbmc";

// Four workerd projects: the default (built-in local agent), property tests, and chats on the http agent and on a model.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const unsetLocalVars = withoutLocalVars();
  const project = (name: string, include: string[], vars: Record<string, string>, exclude: string[] = []) => ({
    plugins: [
      cloudflareTest({
        // The service's entry plus test subclasses of its Durable Objects (test/worker.ts), bound beside its own classes.
        main: "./test/worker.ts",
        wrangler: { configPath },
        miniflare: {
          bindings: {
            ...unsetLocalVars,
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            LOCAL_AGENT_DELAY_MS: "50",
            WEBHOOK_KEY: "test-webhook-key",
            MCP_STATE_KEY: TEST_MCP_STATE_KEY,
            ...vars,
          },
          durableObjects: {
            CHAT_ROOM: { className: "TestChatRoom", useSQLite: true },
            PROJECT_WEBHOOKS: { className: "TestProjectWebhooks", useSQLite: true },
            FAULTY_CHAT_ROOM: { className: "FaultyJobChatRoom", useSQLite: true },
            HELD_MODEL_CHAT_ROOM: { className: "HeldModelChatRoom", useSQLite: true },
          },
        },
      }),
    ],
    // Spies (the frozen clock, fetch fakes) are restored before every test, so no file has to remember it.
    test: { name, include, exclude, setupFiles: ["./test/apply-migrations.ts", "./test/network.ts"], restoreMocks: true },
  });
  return {
    test: {
      // Every file starts its own isolated worker (about a second of setup); one per core overlaps them (the default leaves a core idle).
      maxWorkers: "100%",
      projects: [
        project("workers", ["test/**/*.test.ts"], {}, [
          "test/http-agent/**",
          "test/fuzz/**",
          "test/model-agent/**",
          "test/oauth/**",
          "test/account/**",
          "test/e2e/**",
          "test/a2a/**",
        ]),
        // Every project's agent over A2A: its card and URLs are built from PUBLIC_URL, the address the tests call.
        project("a2a", ["test/a2a/**/*.test.ts"], { PUBLIC_URL: "https://service.test" }),
        // OAuth for /mcp and the account page (which lists connected apps): the issuer is PUBLIC_URL, the address the tests call.
        project("oauth", ["test/oauth/**/*.test.ts", "test/account/**/*.test.ts"], { PUBLIC_URL: "https://service.test" }),
        // Property tests send hundreds of requests per token: the limit is lifted so each reaches validation.
        project("fuzz", ["test/fuzz/**/*.test.ts"], { RATE_LIMIT_PER_MINUTE: "1000000" }),
        project("http-agent", ["test/http-agent/**/*.test.ts"], {
          AGENT_MODE: "http",
          AGENT_URL: "https://agent.test/tasks",
          AGENT_SECRET: "agent-test-secret",
          AGENT_TIMEOUT_SECONDS: "60",
          PUBLIC_URL: "https://api.example.test",
        }),
        // The TypeScript client (client/), the scripts that talk to a Worker (npm run token) and the connector flow in
        // Chromium (test/e2e), in Node against a real wrangler dev started by the global setup.
        {
          test: {
            name: "client",
            include: ["client/test/**/*.test.ts", "scripts/test/**/*.test.ts", "test/e2e/**/*.test.ts"],
            environment: "node",
            globalSetup: ["client/test/global-setup.ts"],
            testTimeout: 30_000,
          },
        },
        // Chats on a model: an OpenAI-compatible server that the tests play (test/model-agent/fake-model.ts).
        project("model-agent", ["test/model-agent/**/*.test.ts"], {
          AGENT_MODE: "openai",
          AGENT_BASE_URL: "https://model.test/v1",
          AGENT_API_KEY: "sk-test-model-key",
          AGENT_MODEL: "test-model",
          AGENT_SYSTEM_PROMPT: "You are the test agent.",
          AGENT_TIMEOUT_SECONDS: "60",
        }),
      ],
    },
  };
});
