// Sends a message and follows the chat until its reply ends: the reply streams in as it is written.
// Against `npm run dev` (demo account and project), from the project's root:
//   npm run client:example
// BASE, TOKEN and PROJECT (what `eval "$(npm run -s token -- --shell)"` sets) say where and as whom; without TOKEN it
// signs in as EMAIL / PASSWORD (the demo account by default) for a token of its own, which it revokes when done.
import { AccountClient, ConnectionError, ProblemError, ProjectChatClient } from "../src/index.ts";

const baseUrl = process.env.BASE ?? `http://127.0.0.1:${process.env.DEV_PORT || 8787}`;
const projectId = process.env.PROJECT ?? "00000000-0000-4000-8000-000000000001";

/** Runs work with TOKEN, or with a token made for it from a session, revoked and signed out of afterwards. */
async function withToken(work: (token: string) => Promise<void>) {
  if (process.env.TOKEN) return work(process.env.TOKEN);
  const account = await AccountClient.signIn({ baseUrl, email: process.env.EMAIL ?? "demo@example.com", password: process.env.PASSWORD ?? "demo-password" });
  try {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const { token, item } = await account.tokens.create({ name: "client example", scopes: ["chat:read", "chat:write"], expiresAt });
    try {
      await work(token);
    } finally {
      await account.tokens.revoke(item.id);
    }
  } finally {
    await account.signOut();
  }
}

try {
  await withToken(async (token) => {
    const client = new ProjectChatClient({ baseUrl, token });
    const chat = await client.chats.create(projectId, { title: "Client example" });
    const stop = new AbortController();
    const events = client.events.follow(projectId, chat.id, { signal: stop.signal });
    await events.next(); // the snapshot: following from here, nothing is missed
    const { submissionId } = await client.messages.send(projectId, chat.id, { content: "Build me a landing page" });
    for await (const event of events) {
      if (event.type === "message.delta") process.stdout.write(event.data.text);
      if (event.type === "message" && event.data.role === "owner" && event.data.submissionId === submissionId && event.data.status !== "working") {
        console.log(`\n[${event.data.status}]`);
        stop.abort();
      }
    }
  });
} catch (error) {
  if (error instanceof ProblemError) console.error(`${error.status} ${error.code}: ${error.detail} (request ${error.requestId})`);
  else if (error instanceof ConnectionError) console.error(`Nothing answers at ${baseUrl}: start the server with npm run dev, or set BASE to where it runs.`);
  else throw error;
  process.exitCode = 1;
}
