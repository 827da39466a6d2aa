#!/usr/bin/env node
// npm run token [-- --shell]: a personal API token for the demo account, from the running `npm run dev` (DEV_PORT
// too). Signs in, revokes the tokens earlier runs made, creates one, signs out, and prints it once: it is never
// written to a file or a log.
import { parseArgs } from "node:util";
import { LOCAL_URL, adminClient, expect, localServer, notLocalDev } from "./lib.mjs";
import { DEMO } from "./seed-data.mjs";

const USAGE = "Usage: npm run token [-- --shell]  (--shell prints export lines for eval, without the explanation)";

/** --shell, or --help; anything else is one line and exit 2, not a stack. */
function options() {
  try {
    return parseArgs({ options: { shell: { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } } }).values;
  } catch (error) {
    console.error(`npm run token: ${error.message}\n${USAGE}`);
    process.exit(2);
  }
}
const values = options();
if (values.help) {
  console.log(`${USAGE}
Signs in as the demo account of the running npm run dev, revokes the token its earlier run made, and prints a new one once.`);
  process.exit(0);
}
const DAYS = 30;
// Every token this script makes is named so; a run revokes the earlier ones, so the demo account keeps one.
const NAME = "npm run token";

/** Signs in as the demo account, replaces earlier runs' tokens with a chat:read + chat:write token valid DAYS days, and ends the session. */
async function createDemoToken(base) {
  const server = await localServer();
  if (server !== "ours") throw new Error(notLocalDev(server));
  const signIn = await adminClient(base, "")("POST", "/auth/token", { email: DEMO.email, password: DEMO.password });
  if (signIn.status === 401) throw new Error(`${DEMO.email} cannot sign in at ${base}: npm run seed restores the demo account.`);
  const session = adminClient(base, expect(signIn, [200], "signing in as the demo account").json.token);
  try {
    const earlier = expect(await session("GET", "/auth/api-tokens"), [200], "listing the demo account's tokens").json.items.filter((t) => t.name.startsWith(NAME));
    for (const { id } of earlier) expect(await session("DELETE", `/auth/api-tokens/${id}`), [204, 404], "revoking an earlier npm run token's token");
    const expiresAt = new Date(Date.now() + DAYS * 86_400_000).toISOString();
    const created = expect(await session("POST", "/auth/api-tokens", { name: NAME, scopes: ["chat:read", "chat:write"], expiresAt }), [201], "creating the API token");
    return { ...created.json, revoked: earlier.length };
  } finally {
    await session("DELETE", "/auth/token");
  }
}

try {
  const { token, item, revoked } = await createDemoToken(LOCAL_URL);
  const chats = `${LOCAL_URL}/v1/projects/${DEMO.projectId}/chats`;
  if (values.shell) {
    // For eval "$(npm run -s token -- --shell)": the variables of the README's examples, exported so that npm run
    // client:example and an MCP client started from this shell see them (mcp.json names the PROJECT_CHAT_ ones).
    console.log(`export BASE=${LOCAL_URL}
export PROJECT=${DEMO.projectId}
export TOKEN=${token}
export PROJECT_CHAT_URL=${LOCAL_URL} PROJECT_CHAT_TOKEN=${token}`);
    if (revoked > 0) console.error(`npm run token: the token of its earlier run no longer works (each run leaves one).`);
  } else {
    console.log(`A personal API token for ${DEMO.email} (${item.scopes.join(", ")}; expires ${item.expiresAt}). It is shown only now:

  ${token}

Demo project: ${DEMO.projectId}
List its chats:

  curl -s ${chats} -H "authorization: Bearer ${token}"

${revoked > 0 ? `${revoked === 1 ? "The token an earlier run of npm run token made no longer works" : `The ${revoked} tokens earlier runs of npm run token made no longer work`}: each run leaves one.` : "Each run of npm run token revokes the token the run before made."}`);
  }
} catch (error) {
  console.error(error.message);
  process.exitCode = 1;
}
