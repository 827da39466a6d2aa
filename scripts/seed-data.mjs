// Loads the demo data (README, "Start") through the admin API: the catalog, the demo account and its project.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, projectDir } from "./lib.mjs";

export const DEMO = {
  email: "demo@example.com",
  password: "demo-password",
  credits: 1000,
  projectId: "00000000-0000-4000-8000-000000000001",
  projectName: "Demo project",
};

/**
 * Loads the demo data, replacing what is there: the whole catalog, the demo account's password and
 * credits, and its project (active again). Chats and other accounts stay as they are.
 */
export async function seedDemoData(call) {
  const catalog = JSON.parse(readFileSync(join(projectDir, "scripts/demo/catalog.json"), "utf8"));
  expect(await call("PUT", "/admin/catalog", catalog), [204], "loading the demo catalog");
  const account = await resetDemoAccount(call);
  const project = await call("POST", "/admin/projects", { id: DEMO.projectId, name: DEMO.projectName, ownerAccountId: account.id });
  expect(project, [201, 409], "creating the demo project");
  if (project.status === 409) expect(await call("PATCH", `/admin/projects/${DEMO.projectId}`, { status: "active" }), [200], "reactivating the demo project");
  console.log(`Loaded the demo catalog, ${DEMO.email} / ${DEMO.password} with ${DEMO.credits} credits, and project ${DEMO.projectId}.`);
}

async function resetDemoAccount(call) {
  const created = await call("POST", "/admin/accounts", { email: DEMO.email, password: DEMO.password, credits: DEMO.credits });
  if (expect(created, [201, 409], "creating the demo account").status === 201) return created.json;
  const [existing] = expect(await call("GET", `/admin/accounts?email=${encodeURIComponent(DEMO.email)}`), [200], "finding the demo account").json.items;
  return expect(await call("PATCH", `/admin/accounts/${existing.id}`, { password: DEMO.password, credits: DEMO.credits }), [200], "resetting the demo account").json;
}
