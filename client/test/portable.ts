// The client's cases that need nothing but fetch: run in Node (portable.test.ts) and in Chromium (browser.test.ts).
import { AccountClient, type CallOptions, type ChatEvent, type ClientOptions, ConnectionError, ProblemError, ProjectChatClient, TimeoutError } from "../src/index.ts";
import { equal, eventually, ok, rejection } from "./assert.ts";
import { followUntilReply, type Worker, world } from "./world.ts";

/** Where the cases run: the Worker, a base URL whose requests are taken and never answered (with their count), and one where nothing listens. */
export type Env = Worker & { hanging: string; hangingRequests(): Promise<number>; refused: string };

const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events);
};
const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every method of both clients, each a call with the given call options; the ids need not exist (the table talks to servers that never answer). */
function surface(baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}) {
  const client = new ProjectChatClient({ ...options, baseUrl, token: "pct_unused" });
  const account = new AccountClient({ ...options, baseUrl, session: "unused" });
  const [p, c, id] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const calls: Record<string, (o: CallOptions) => Promise<unknown>> = {
    "projects.list": (o) => client.projects.list(o),
    "credits.get": (o) => client.credits.get(p, o),
    "usage.get": (o) => client.usage.get(p, { ...o, from: "2026-01-01", to: "2026-01-31" }),
    "chats.list": (o) => client.chats.list(p, o),
    "chats.create": (o) => client.chats.create(p, { title: "t" }, o),
    "chats.get": (o) => client.chats.get(p, c, o),
    "chats.rename": (o) => client.chats.rename(p, c, { title: "t" }, o),
    "chats.archive": (o) => client.chats.archive(p, c, o),
    "chats.restore": (o) => client.chats.restore(p, c, o),
    "chats.fork": (o) => client.chats.fork(p, c, { atMessageId: id }, o),
    "messages.send": (o) => client.messages.send(p, c, { content: "x" }, o),
    "messages.steer": (o) => client.messages.steer(p, c, { content: "x" }, o),
    "messages.stop": (o) => client.messages.stop(p, c, id, o),
    "messages.page": (o) => client.messages.page(p, c, o),
    "messages.list": (o) => drain(client.messages.list(p, c, o)),
    "messages.sendAndWait": (o) => client.messages.sendAndWait(p, c, { content: "x" }, o),
    "questions.get": (o) => client.questions.get(p, c, id, o),
    "questions.answer": (o) => client.questions.answer(p, c, id, { optionIds: ["1"] }, o),
    "chains.get": (o) => client.chains.get(p, c, id, o),
    "chains.cancel": (o) => client.chains.cancel(p, c, id, o),
    "queue.get": (o) => client.queue.get(p, c, o),
    "queue.cancel": (o) => client.queue.cancel(p, c, id, o),
    "events.follow": (o) => drain(client.events.follow(p, c, o)),
    "webhooks.create": (o) => client.webhooks.create(p, { url: "https://example.com/hook" }, o),
    "webhooks.list": (o) => client.webhooks.list(p, o),
    "webhooks.delete": (o) => client.webhooks.delete(p, id, o),
    "webhooks.deliveries": (o) => client.webhooks.deliveries(p, id, o),
    "account.tokens.create": (o) => account.tokens.create({ name: "t", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 60_000).toISOString() }, o),
    "account.tokens.list": (o) => account.tokens.list(o),
    "account.tokens.revoke": (o) => account.tokens.revoke(id, o),
    "account.tokens.setCreditLimit": (o) => account.tokens.setCreditLimit(id, 10, o),
    "account.credits.page": (o) => account.credits.page({ ...o, limit: 10 }),
    "account.credits.list": (o) => drain(account.credits.list(o)),
    "account.signOut": (o) => account.signOut(o),
    "AccountClient.signIn": (o) => AccountClient.signIn({ ...options, baseUrl, email: "nobody@example.test", password: "pw", ...o }),
  };
  return { client, account, calls };
}

/** The methods the clients have, found by walking them, so that a method added later without a row fails the table. */
function methodsOf(client: ProjectChatClient, account: AccountClient): string[] {
  const names: string[] = [];
  for (const [group, methods] of Object.entries(client)) for (const [name, value] of Object.entries(methods)) if (typeof value === "function") names.push(`${group}.${name}`);
  for (const group of ["tokens", "credits"] as const) for (const name of Object.keys(account[group])) names.push(`account.${group}.${name}`);
  for (const name of Object.getOwnPropertyNames(AccountClient.prototype)) if (name !== "constructor") names.push(`account.${name}`);
  for (const name of Object.getOwnPropertyNames(AccountClient)) if (typeof Reflect.get(AccountClient, name) === "function") names.push(`AccountClient.${name}`);
  return names.sort();
}

// follow ends when its signal aborts and retries what fails: it never rejects for a network reason.
const ENDS_QUIETLY = "events.follow";

/** Runs every row at once; `expect` checks each outcome (undefined when it fulfilled). A row that does not settle within `ms` fails by name. */
async function table(
  calls: Record<string, (o: CallOptions) => Promise<unknown>>,
  options: (name: string) => CallOptions,
  expect: (name: string, error: unknown) => void,
  ms = 5_000,
) {
  const outcomes = await Promise.all(
    Object.entries(calls).map(async ([name, call]) => {
      const settled = call(options(name)).then(
        () => ({ name, error: undefined }),
        (error: unknown) => ({ name, error }),
      );
      return Promise.race([settled, later(ms).then(() => ({ name, error: new Error(`${name} did not settle within ${ms} ms`) }))]);
    }),
  );
  for (const { name, error } of outcomes) expect(name, error);
}

export const cases: Record<string, (env: Env) => Promise<void>> = {
  "the table names every method of both clients": async (env) => {
    const { client, account, calls } = surface(env.hanging);
    equal(Object.keys(calls).sort(), methodsOf(client, account), "the methods");
  },

  "every method gives up when its signal aborts, before it starts and while it waits, with the signal's reason": async (env) => {
    const { calls } = surface(env.hanging, { maxRetries: 0 });
    const reason = new Error("cancelled by the test");
    const before = await env.hangingRequests();
    await table(
      calls,
      () => ({ signal: AbortSignal.abort(reason) }),
      (name, error) => ok(name === ENDS_QUIETLY ? error === undefined : error === reason, `${name} with an aborted signal: ${String(error)}`),
    );
    equal(await env.hangingRequests(), before, "requests sent with an aborted signal");
    // Now while each waits for its answer: aborted once every one has reached the server.
    const controllers = new Map(Object.keys(calls).map((name) => [name, new AbortController()]));
    const running = table(
      calls,
      (name) => ({ signal: controllers.get(name)!.signal }),
      (name, error) => ok(name === ENDS_QUIETLY ? error === undefined : error === reason, `${name} aborted while waiting: ${String(error)}`),
      15_000,
    );
    await eventually(async () => (await env.hangingRequests()) >= before + controllers.size, "every method's request reaching the server");
    for (const controller of controllers.values()) controller.abort(reason);
    await running;
  },

  "every method times out as a TimeoutError, its own timeout before the client's, and only a repeatable try is retried": async (env) => {
    const { calls } = surface(env.hanging, { maxRetries: 0, timeout: 120_000 });
    const started = Date.now();
    await table(
      calls,
      (name) => (name === ENDS_QUIETLY ? { timeout: 150, signal: AbortSignal.timeout(1_000) } : { timeout: 150 }),
      (name, error) => {
        if (name === ENDS_QUIETLY) return ok(error === undefined, `follow: ${String(error)}`);
        ok(error instanceof TimeoutError && error.timeout === 150, `${name}: ${String(error)}`);
      },
    );
    ok(Date.now() - started < 5_000, "the table took too long");
    // The client's own timeout when a call sets none.
    const impatient = surface(env.hanging, { maxRetries: 0, timeout: 120 });
    const error = await rejection(impatient.client.chats.get(crypto.randomUUID(), crypto.randomUUID()), "a get with the client's timeout");
    ok(error instanceof TimeoutError && error.timeout === 120, `the client's timeout: ${String(error)}`);
    // A timed-out GET is tried again, and so is an answer (its key makes it once); a webhook's creation, which repeating could double, is not.
    const retrying = surface(env.hanging, { maxRetries: 1, timeout: 150 }).calls;
    for (const [name, tries] of [
      ["chats.get", 2],
      ["questions.answer", 2],
      ["webhooks.create", 1],
    ] as const) {
      const before = await env.hangingRequests();
      ok((await rejection(retrying[name]!({}), name)) instanceof TimeoutError, `${name} with a retry`);
      equal((await env.hangingRequests()) - before, tries, `${name}'s tries`);
    }
    // follow opens the stream again after each timeout until its signal stops it.
    const before = await env.hangingRequests();
    await impatient.calls["events.follow"]!({ timeout: 100, signal: AbortSignal.timeout(1_500) });
    ok((await env.hangingRequests()) - before >= 2, "follow opened its stream again after a timeout");
  },

  "a network failure is a ConnectionError that keeps its cause, on every method": async (env) => {
    const { calls } = surface(env.refused, { maxRetries: 0 });
    await table(
      calls,
      (name) => (name === ENDS_QUIETLY ? { signal: AbortSignal.timeout(1_000) } : { timeout: 1_000 }),
      (name, error) => {
        if (name === ENDS_QUIETLY) return ok(error === undefined, `follow: ${String(error)}`);
        // sendAndWait follows first, and following retries until its timeout.
        if (name === "messages.sendAndWait") return ok(error instanceof TimeoutError, `${name}: ${String(error)}`);
        ok(error instanceof ConnectionError && !(error instanceof TimeoutError) && error.cause instanceof TypeError, `${name}: ${String(error)}`);
        ok(error.message.includes(env.refused), `${name}'s message names where: ${error.message}`);
      },
    );
  },

  "signs in, creates, lists and revokes tokens, and says why a sign-in is refused": async (env) => {
    const w = await world(env);
    const created = await w.session.tokens.create({ name: "second", scopes: ["chat:read"], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    ok(created.token.startsWith("pct_"), "a pct_ token");
    ok(
      (await w.session.tokens.list()).some((t) => t.name === "second"),
      "listed",
    );
    await w.session.tokens.revoke(created.item.id);
    ok(!(await w.session.tokens.list()).some((t) => t.id === created.item.id), "revoked");
    const refused = await rejection(AccountClient.signIn({ baseUrl: env.base, email: w.email, password: "wrong" }), "a wrong password");
    ok(refused instanceof ProblemError && refused.status === 401 && refused.code === "unauthorized", `refused: ${String(refused)}`);
    ok(typeof refused.requestId === "string", "a request id");
    await w.session.signOut();
  },

  "reads Chat-Event-Id and the rate limit with the body, and follows from that id missing nothing": async (env) => {
    const w = await world(env);
    const chat = await w.client.chats.create(w.projectId, { title: "headers" });
    const got = w.client.chats.get(w.projectId, chat.id);
    const answer = await got.withResponse();
    equal((await got).id, chat.id, "the same call awaited");
    equal(answer.data.id, chat.id, "the body");
    equal(answer.response.status, 200, "the status");
    ok(Number.isInteger(answer.chatEventId) && answer.chatEventId > 0, `a Chat-Event-Id: ${answer.chatEventId}`);
    equal(answer.response.headers.get("chat-event-id"), String(answer.chatEventId), "the header it came from");
    ok(
      answer.rateLimit !== null && answer.rateLimit.limit === 100_000 && answer.rateLimit.remaining < 100_000 && answer.rateLimit.resetSeconds <= 60,
      `the rate limit: ${JSON.stringify(answer.rateLimit)}`,
    );
    for (const read of [w.client.messages.page(w.projectId, chat.id), w.client.queue.get(w.projectId, chat.id)])
      equal((await read.withResponse()).chatEventId, answer.chatEventId, "the page's and the queue's Chat-Event-Id");
    const listed = await w.client.chats.list(w.projectId).withResponse();
    equal(
      listed.data.map((c) => c.id),
      [chat.id],
      "a list's body is its items",
    );
    equal((await w.session.tokens.list().withResponse()).rateLimit, null, "no rate limit on /auth");
    // What happens after the id is all that following from it gives: no snapshot, the rename first.
    await w.client.chats.rename(w.projectId, chat.id, { title: "renamed" });
    const stop = new AbortController();
    let first: ChatEvent | undefined;
    for await (const event of w.client.events.follow(w.projectId, chat.id, { after: answer.chatEventId, signal: stop.signal })) {
      first = event;
      stop.abort();
    }
    ok(first?.type === "chat" && first.data.title === "renamed" && first.id > answer.chatEventId, `the first event after it: ${JSON.stringify(first)}`);
  },

  "follows a reply as it streams and waits for it, then pages the history": async (env) => {
    const w = await world(env);
    const chat = await w.client.chats.create(w.projectId, { title: "streaming" });
    const { events, done } = followUntilReply(w.client, w.projectId, chat.id);
    await eventually(() => events.length > 0, "the snapshot");
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "stream to me" });
    await done;
    ok(reply.role === "owner" && reply.status === "success", `the reply: ${JSON.stringify(reply)}`);
    const deltas = events.flatMap((e) => (e.type === "message.delta" && e.data.id === reply.id ? [e.data.text] : []));
    ok(deltas.length > 1, `the reply came in parts: ${deltas.length}`);
    equal(deltas.join(""), reply.content, "the deltas make the reply");
    const history: string[] = [];
    for await (const m of w.client.messages.list(w.projectId, chat.id, { limit: 1 })) history.push(m.role);
    equal(history, ["owner", "user"], "the history, newest first, a page at a time");
  },

  "asks a question through sendAndWait, reads it and answers it once; an answer that does not fit, or comes twice, is a ProblemError": async (env) => {
    const w = await world(env);
    const chat = await w.client.chats.create(w.projectId, { title: "questions" });
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "/choose Pick a color | Red | Green" });
    ok(reply.questionId !== null, `the reply names its question: ${JSON.stringify(reply)}`);
    const question = await w.client.questions.get(w.projectId, chat.id, reply.questionId);
    equal([question.id, question.messageId], [reply.questionId, reply.id], "the question the reply asked");
    equal([question.kind, question.status, question.prompt], ["choice", "pending", "Pick a color"], "the question");
    equal(
      question.options?.map((o) => o.label),
      ["Red", "Green"],
      "its options",
    );
    const misfit = await rejection(w.client.questions.answer(w.projectId, chat.id, question.id, { decision: "approve" }), "an approval's answer to a choice");
    ok(misfit instanceof ProblemError && misfit.status === 400 && misfit.code === "answer_does_not_fit", `does not fit: ${String(misfit)}`);
    const key = crypto.randomUUID();
    const answered = await w.client.questions.answer(w.projectId, chat.id, question.id, { optionIds: ["2"] }, { idempotencyKey: key });
    equal([answered.chatId, answered.questionId], [chat.id, question.id], "the answer's submission");
    const replayed = await w.client.questions.answer(w.projectId, chat.id, question.id, { optionIds: ["2"] }, { idempotencyKey: key }).withResponse();
    equal([replayed.data.submissionId, replayed.response.headers.get("idempotency-replayed")], [answered.submissionId, "true"], "a retry with its key");
    const twice = await rejection(w.client.questions.answer(w.projectId, chat.id, question.id, { optionIds: ["1"] }), "a second answer");
    ok(twice instanceof ProblemError && twice.status === 409 && twice.code === "question_not_pending", `a second answer: ${String(twice)}`);
    const closed = await w.client.questions.get(w.projectId, chat.id, question.id);
    equal([closed.status, closed.submissionId, JSON.stringify(closed.answer)], ["answered", answered.submissionId, '{"optionIds":["2"]}'], "the question answered");
    const plain = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "and nothing to ask" });
    equal(plain.questionId, null, "a reply that asks nothing");
  },
};
