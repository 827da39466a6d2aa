import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two workerd projects: the default (built-in local agent) and one whose chats use the http agent adapter.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const project = (name: string, include: string[], vars: Record<string, string>, exclude: string[] = []) => ({
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: { bindings: { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: "test-admin-token", LOCAL_AGENT_DELAY_MS: "50", ...vars } },
      }),
    ],
    test: { name, include, exclude, setupFiles: ["./test/apply-migrations.ts"] },
  });
  return {
    test: {
      projects: [
        project("workers", ["test/**/*.test.ts"], {}, ["test/http-agent/**"]),
        project("http-agent", ["test/http-agent/**/*.test.ts"], { AGENT_MODE: "http", AGENT_URL: "https://agent.test/tasks", AGENT_SECRET: "agent-test-secret", AGENT_TIMEOUT_SECONDS: "60" }),
      ],
    },
  };
});
