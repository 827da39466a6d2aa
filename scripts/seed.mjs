#!/usr/bin/env node
// npm run seed [-- --url URL --token ADMIN_TOKEN]: reloads the demo data (scripts/seed-data.mjs says what it replaces).
import { parseArgs } from "node:util";
import { adminClient, localAdminToken, withServer } from "./lib.mjs";
import { seedDemoData } from "./seed-data.mjs";

const { values } = parseArgs({ options: { url: { type: "string" }, token: { type: "string" } } });
await withServer(values.url, (url) => seedDemoData(adminClient(url, values.token ?? (values.url ? process.env.ADMIN_TOKEN : localAdminToken()))));
