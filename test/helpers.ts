import { env, exports } from "cloudflare:workers";
import type { TestChatRoom } from "./doubles/test-chat-room";
import { expect } from "vitest";
import { Chat, MessagePage, Queue } from "../src/chats/schemas";

export const ADMIN = "test-admin-token";

type CallOptions = { headers?: Record<string, string>; body?: unknown; raw?: BodyInit; token?: string };

/** Calls the Worker's own fetch handler, as a client would over HTTP. */
export async function call(method: string, path: string, options: CallOptions = {}) {
  const headers = new Headers(options.headers);
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  let body: BodyInit | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return answerOf(await exports.default.fetch(new Request(`https://service.test${path}`, { method, headers, body })));
}

/** A response read whole: status, headers, text and the JSON it holds (undefined when it is not JSON). */
export async function answerOf(response: Response) {
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export const admin = (method: string, path: string, body?: unknown) => call(method, path, { token: ADMIN, body });

export function expectProblem(r: Awaited<ReturnType<typeof call>>, status: number, code?: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get("content-type")).toContain("application/problem+json");
  expect(r.json).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), code: expect.any(String), type: expect.any(String) });
  if (code) expect(r.json.code).toBe(code);
}

export { env };

export const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

export async function newAccount(credits = 1000) {
  const email = `u-${crypto.randomUUID()}@example.test`;
  const password = `pw-${crypto.randomUUID()}`;
  const r = await admin("POST", "/admin/accounts", { email, password, credits });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id as string, email, password };
}

export async function signIn(account: { email: string; password: string }) {
  const r = await call("POST", "/auth/token", { body: { email: account.email, password: account.password } });
  expect(r.status, r.text).toBe(200);
  return r.json.token as string;
}

export async function newToken(session: string, scopes: string[] = ["chat:read", "chat:write"], days = 30) {
  const r = await call("POST", "/auth/api-tokens", { token: session, body: { name: "test", scopes, expiresAt: inDays(days) } });
  expect(r.status, r.text).toBe(201);
  return r.json.token as string;
}

/** An account owning a project, with a session and a read+write API token. */
export async function world(options: { credits?: number } = {}) {
  const account = await newAccount(options.credits ?? 1000);
  const r = await admin("POST", "/admin/projects", { name: "test project", ownerAccountId: account.id });
  expect(r.status, r.text).toBe(201);
  const session = await signIn(account);
  return { account, projectId: r.json.id as string, session, token: await newToken(session) };
}

export type World = Awaited<ReturnType<typeof world>>;
export const chatsPath = (w: { projectId: string }) => `/v1/projects/${w.projectId}/chats`;

export async function newChat(w: World, title = "chat") {
  const r = await call("POST", chatsPath(w), { token: w.token, body: { title } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; title: string };
}

export function send(w: World, chatId: string, content: string, key: string = crypto.randomUUID(), extra: Record<string, unknown> = {}) {
  return call("POST", `${chatsPath(w)}/${chatId}/messages`, { token: w.token, headers: { "idempotency-key": key }, body: { content, ...extra } });
}

/** A chat's messages, newest first, read from its object directly so reading spends no token budget. */
export async function peek(w: { projectId: string }, chatId: string) {
  const page = await room(chatId).messages(w.projectId, undefined, 100);
  if (page.kind !== "page") throw new Error(page.kind);
  return page.items;
}

// The test Worker binds CHAT_ROOM to TestChatRoom, the service's class with what tests drive (vitest.config.ts, test/worker.ts).
const chatRooms = env.CHAT_ROOM as unknown as DurableObjectNamespace<TestChatRoom>;

/** The chat's object, by the chat's id. */
export const room = (chatId: string) => chatRooms.getByName(chatId);

/** What a send made over RPC by a test carries besides its text: no If-Busy, and a credential of its own without a credit limit. */
export const SENT_BY_TEST = { ifBusy: "queue", credential: { gateName: "test:rpc", atCreditLimit: false } } as const;

/** The queue as the chat's object answers it over RPC (also while its project is suspended, when the API answers 404). */
export async function roomQueue(chatId: string, projectId: string) {
  const queue = await room(chatId).queueEntries(projectId);
  if (queue.kind !== "queue") throw new Error(queue.kind);
  return queue.items;
}

/** The chat as its object answers it over RPC. */
export async function roomChat(chatId: string, projectId: string) {
  const read = await room(chatId).get(projectId);
  if (read.kind !== "chat") throw new Error(read.kind);
  return read.chat;
}

/** A chat, its history and its queue as a client reads them. */
export const chatOf = async (w: World, chatId: string) => Chat.parse((await call("GET", `${chatsPath(w)}/${chatId}`, { token: w.token })).json);
export const historyOf = async (w: World, chatId: string, query = "?limit=100") =>
  MessagePage.parse((await call("GET", `${chatsPath(w)}/${chatId}/messages${query}`, { token: w.token })).json);
export const queueOf = async (w: World, chatId: string) => Queue.parse((await call("GET", `${chatsPath(w)}/${chatId}/queue`, { token: w.token })).json);

/** The agent's successful replies in a page of messages. */
export const replies = (page: { items: { role: string; status: string | null }[] }) => page.items.filter((m) => m.role === "owner" && m.status === "success");

/** The account's balance, from its ledger object (where credits live). */
export async function creditsOf(accountId: string): Promise<number> {
  const balance = await ledger(accountId).balance(accountId);
  if (balance === null) throw new Error(`no account ${accountId}`);
  return balance;
}

/** The account's AccountLedger object, by the account's id. */
export const ledger = (accountId: string) => env.ACCOUNT_LEDGER.getByName(accountId);
