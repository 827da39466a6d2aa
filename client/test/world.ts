// A fresh account with a project and a token, made through the Worker's admin API: in Node and in the browser alike.
import { AccountClient, type ChatEvent, type ClientOptions, ProjectChatClient } from "../src/index.ts";

export type Worker = { base: string; adminToken: string };

/** A call of the Worker's admin API (the tests' operator): its JSON body. */
export async function admin(worker: Worker, method: string, path: string, body?: unknown) {
  const r = await fetch(`${worker.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${worker.adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** An account owning a project, signed in through the client, with a token; the client talks to `baseUrl` (a proxy, say). */
export async function world(worker: Worker, baseUrl = worker.base, options: Omit<ClientOptions, "baseUrl"> = {}) {
  const email = `client-${crypto.randomUUID()}@example.test`;
  const password = `pw-${crypto.randomUUID()}`;
  const account = await admin(worker, "POST", "/admin/accounts", { email, password, credits: 1000 });
  const project = await admin(worker, "POST", "/admin/projects", { name: "client tests", ownerAccountId: account.id });
  const session = await AccountClient.signIn({ baseUrl: worker.base, email, password });
  const { token } = await session.tokens.create({ name: "client tests", scopes: ["chat:read", "chat:write"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
  return { email, password, accountId: account.id as string, session, token, projectId: project.id as string, client: new ProjectChatClient({ ...options, baseUrl, token }) };
}

/** Follows a chat from its snapshot, keeping every event, until an agent reply succeeds: then `done` settles. */
export function followUntilReply(client: ProjectChatClient, projectId: string, chatId: string) {
  const stop = new AbortController();
  const events: ChatEvent[] = [];
  const done = (async () => {
    for await (const event of client.events.follow(projectId, chatId, { signal: stop.signal })) {
      events.push(event);
      if (event.type === "message" && event.data.role === "owner" && event.data.status === "success") stop.abort();
    }
  })();
  return { events, done };
}
