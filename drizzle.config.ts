import { defineConfig } from "drizzle-kit";

// drizzle-kit writes flat .sql files that `wrangler d1 migrations apply` reads as they are.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  migrations: { prefix: "index" },
});
