#!/usr/bin/env node
// npm run token [-- --shell]: a personal API token for the demo account, from the running `npm run dev` (DEV_PORT
// too). Signs in, creates the token, signs out, and prints the token once: it is never written to a file or a log.
import { parseArgs } from "node:util";
import { LOCAL_URL, adminClient, expect, isUp } from "./lib.mjs";
import { DEMO } from "./seed-data.mjs";

const { values } = parseArgs({ options: { shell: { type: "boolean", default: false } } });
const DAYS = 30;

/** Signs in as the demo account, creates a chat:read + chat:write token valid DAYS days, and ends the session. */
async function createDemoToken(base) {
  if (!(await isUp(base))) throw new Error(`Nothing answers at ${base}: start it with npm run dev (set DEV_PORT here too if it runs elsewhere).`);
  const signIn = await adminClient(base, "")("POST", "/auth/token", { email: DEMO.email, password: DEMO.password });
  if (signIn.status === 401) throw new Error(`${DEMO.email} cannot sign in at ${base}: npm run seed restores the demo account.`);
  const session = adminClient(base, expect(signIn, [200], "signing in as the demo account").json.token);
  try {
    const expiresAt = new Date(Date.now() + DAYS * 86_400_000).toISOString();
    const body = { name: `npm run token ${new Date().toISOString().slice(0, 16)}`, scopes: ["chat:read", "chat:write"], expiresAt };
    return expect(await session("POST", "/auth/api-tokens", body), [201], "creating the API token").json;
  } finally {
    await session("DELETE", "/auth/token");
  }
}

try {
  const { token, item } = await createDemoToken(LOCAL_URL);
  const chats = `${LOCAL_URL}/v1/projects/${DEMO.projectId}/chats`;
  if (values.shell) {
    // For eval "$(npm run -s token -- --shell)": the variables the README's curl examples use.
    console.log(`BASE=${LOCAL_URL}\nPROJECT=${DEMO.projectId}\nTOKEN=${token}`);
  } else {
    console.log(`A personal API token for ${DEMO.email} (${item.scopes.join(", ")}; expires ${item.expiresAt}). It is shown only now:

  ${token}

Demo project: ${DEMO.projectId}
List its chats:

  curl -s ${chats} -H "authorization: Bearer ${token}"

Revoke it with DELETE /auth/api-tokens/${item.id} (signed in as ${DEMO.email}).`);
  }
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}
