// Sends a message and follows the chat until its reply ends: the reply streams in as it is written.
// Against `npm run dev` (demo account and project), from the project's root:
//   npm run client:example
// Elsewhere: BASE_URL (else local dev on DEV_PORT, as npm run dev), EMAIL, PASSWORD and PROJECT_ID say where and who.
import { AccountClient, ProblemError, ProjectChatClient } from "../src/index.ts";

const baseUrl = process.env.BASE_URL ?? `http://127.0.0.1:${process.env.DEV_PORT || 8787}`;
const projectId = process.env.PROJECT_ID ?? "00000000-0000-4000-8000-000000000001";
const account = await AccountClient.signIn({ baseUrl, email: process.env.EMAIL ?? "demo@example.com", password: process.env.PASSWORD ?? "demo-password" });
const { token } = await account.tokens.create({ name: "follow example", scopes: ["chat:read", "chat:write"], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
const client = new ProjectChatClient({ baseUrl, token });

try {
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
} catch (error) {
  if (error instanceof ProblemError) console.error(`${error.status} ${error.code}: ${error.detail} (request ${error.requestId})`);
  else throw error;
  process.exitCode = 1;
}
