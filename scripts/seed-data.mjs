// Loads the demo data of CONTRACT.md through the admin API: the catalog, the demo account and its project.
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

export async function seedDemoData(call) {
  const catalog = JSON.parse(readFileSync(join(projectDir, "scripts/demo/catalog.json"), "utf8"));
  expect(await call("PUT", "/admin/catalog", catalog), [204], "loading the demo catalog");
  const created = await call("POST", "/admin/accounts", { email: DEMO.email, password: DEMO.password, credits: DEMO.credits });
  expect(created, [201, 409], "creating the demo account");
  if (created.status === 409) {
    console.log(`The demo account exists already; left as it is.`);
  } else {
    const project = await call("POST", "/admin/projects", { id: DEMO.projectId, name: DEMO.projectName, ownerAccountId: created.json.id });
    expect(project, [201, 409], "creating the demo project");
  }
  console.log(`Seeded the demo catalog, ${DEMO.email} / ${DEMO.password} and project ${DEMO.projectId}.`);
}
