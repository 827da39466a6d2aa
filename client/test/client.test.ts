import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { type ChatEvent, type Message, ProblemError, verifyWebhook, WebhookVerificationError } from "../src/index.ts";
import { dropFirstAnswer, pass, proxy, world } from "./helpers.ts";
import { followUntilReply } from "./world.ts";

describe("the project-chat client", () => {
  it("sends once however often a lost answer makes it retry: one message stored, the same submission", async () => {
    const p = await dropFirstAnswer("/messages");
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "exactly once" });
    const submission = await w.client.messages.send(w.projectId, chat.id, { content: "only one of me" });
    expect(p.dropped()).toBe(true);
    const users: Message[] = [];
    for await (const m of w.client.messages.list(w.projectId, chat.id)) if (m.role === "user") users.push(m);
    expect(users.map((m) => [m.content, m.submissionId])).toEqual([["only one of me", submission.submissionId]]);
    await p.close();
  });

  it("forks a chat once however often a lost answer makes it retry, and a rerun gives another answer there", async () => {
    const p = await dropFirstAnswer("/fork");
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "first direction" });
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "Plan the launch" });
    const [asked] = (await w.client.messages.page(w.projectId, chat.id, { limit: 2 })).items.filter((m) => m.role === "user");
    const forked = await w.client.chats.fork(w.projectId, chat.id, { atMessageId: asked!.id, rerun: true });
    expect(p.dropped()).toBe(true);
    expect(forked.chat).toMatchObject({ title: "first direction (fork)", forkedFrom: { chatId: chat.id, messageId: asked!.id } });
    const listed = await w.client.chats.list(w.projectId);
    expect(listed.filter((c) => c.forkedFrom?.chatId === chat.id)).toHaveLength(1);
    await vi.waitFor(
      async () => {
        const [newest] = (await w.client.messages.page(w.projectId, forked.chat.id, { limit: 1 })).items;
        expect(newest).toMatchObject({ role: "owner", status: "success", submissionId: forked.submissionId, content: reply.content });
      },
      { timeout: 15_000, interval: 200 },
    );
    await p.close();
  });

  it("follows a submission's chain across the question its reply asked, and cancels a waiting one by withdrawing its question", async () => {
    const w = await world();
    const chat = await w.client.chats.create(w.projectId, { title: "chains" });
    const asked = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "/ask Your name?" });
    expect(await w.client.chains.get(w.projectId, chat.id, asked.submissionId!)).toMatchObject({ state: "awaiting", question: { id: asked.questionId } });
    const withdrawn = await w.client.chains.cancel(w.projectId, chat.id, asked.submissionId!);
    expect(withdrawn).toMatchObject({ state: "cancelled", question: { status: "declined", submissionId: null } });
  });

  it("answers a question once however often a lost answer makes it retry", async () => {
    const p = await dropFirstAnswer("/answer");
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "answered once" });
    const { questionId } = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "/ask Your name?" });
    const answered = await w.client.questions.answer(w.projectId, chat.id, questionId!, { text: "Ana" });
    expect(p.dropped()).toBe(true);
    expect(await w.client.questions.get(w.projectId, chat.id, questionId!)).toMatchObject({ status: "answered", answer: { text: "Ana" }, submissionId: answered.submissionId });
    // Its user message is written when its task starts, just after the answer is accepted.
    await vi.waitFor(
      async () => {
        const users: Message[] = [];
        for await (const m of w.client.messages.list(w.projectId, chat.id)) if (m.role === "user") users.push(m);
        expect(users.map((m) => [m.content, m.submissionId])).toEqual([
          ["Ana", answered.submissionId],
          ["/ask Your name?", expect.any(String)],
        ]);
      },
      { timeout: 5_000, interval: 100 },
    );
    await p.close();
  });

  it("waits out a 429's Retry-After and then answers", async () => {
    let limited = 0;
    const p = await proxy(async (req, res, forward) => {
      if (req.method === "GET" && limited++ === 0) {
        res.writeHead(429, { "content-type": "application/problem+json", "retry-after": "1" });
        res.end(JSON.stringify({ type: "about:blank", title: "Too Many Requests", status: 429, detail: "slow down", code: "rate_limited" }));
        return;
      }
      await pass(res, forward);
    });
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "patient" });
    const started = Date.now();
    expect((await w.client.chats.get(w.projectId, chat.id)).id).toBe(chat.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    await p.close();
  });

  it("pages through the whole history, newest first, and waits for a reply", async () => {
    const w = await world();
    const chat = await w.client.chats.create(w.projectId, { title: "pages" });
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "one" });
    expect(reply).toMatchObject({ role: "owner", status: "success" });
    for (const content of ["two", "three"]) await w.client.messages.sendAndWait(w.projectId, chat.id, { content });
    const all: Message[] = [];
    for await (const m of w.client.messages.list(w.projectId, chat.id, { limit: 2 })) all.push(m);
    expect(all).toHaveLength(6);
    expect(new Set(all.map((m) => m.id)).size).toBe(6);
    expect(all.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["three", "two", "one"]);
  });

  it("follows a stream cut mid-reply without a gap or a duplicate", async () => {
    let cut = 0;
    const p = await proxy(async (req, res, forward) => {
      const answer = await forward();
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!req.url!.includes("/events") || cut > 0) return void answer.pipe(res);
      // The first stream breaks right after the reply's first delta.
      answer.on("data", (chunk: Buffer) => {
        res.write(chunk);
        if (cut === 0 && chunk.toString().includes("event: message.delta")) {
          cut = 1;
          setTimeout(() => req.socket.destroy(), 10);
        }
      });
    });
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "cut" });
    const following = followUntilReply(w.client, w.projectId, chat.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await w.client.messages.send(w.projectId, chat.id, { content: "a reply to cut" });
    await following.done;
    const { events } = following;
    expect(cut).toBe(1);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.filter((e) => e.type === "snapshot")).toHaveLength(1);
    const done = events.find((e) => e.type === "message" && e.data.role === "owner" && e.data.status === "success") as Extract<ChatEvent, { type: "message" }>;
    const deltas = events.filter((e): e is Extract<ChatEvent, { type: "message.delta" }> => e.type === "message.delta" && e.data.id === done.data.id);
    expect(deltas.map((d) => d.data.text).join("")).toBe(done.data.content);
    await p.close();
  });

  it("stops, steers, cancels and reads the queue, with typed problems", async () => {
    const w = await world();
    const chat = await w.client.chats.create(w.projectId, { title: "control" });
    const first = await w.client.messages.send(w.projectId, chat.id, { content: "long work" });
    const second = await w.client.messages.send(w.projectId, chat.id, { content: "waits" });
    expect((await w.client.queue.get(w.projectId, chat.id)).items.map((e) => e.id)).toContain(second.submissionId);
    await w.client.queue.cancel(w.projectId, chat.id, second.submissionId);
    await w.client.queue.cancel(w.projectId, chat.id, second.submissionId);
    // The first task is working (the built-in agent takes 2 s here): steer it, then stop its reply.
    const watch = new AbortController();
    let working: Message | undefined;
    for await (const event of w.client.events.follow(w.projectId, chat.id, { after: 0, signal: watch.signal })) {
      if (event.type === "message" && event.data.role === "owner" && event.data.submissionId === first.submissionId && event.data.status === "working") {
        working = event.data;
        watch.abort();
      }
    }
    const steered = await w.client.messages.steer(w.projectId, chat.id, { content: "make it blue" });
    expect(steered.disposition).toBe("queued");
    const stopped = await w.client.messages.stop(w.projectId, chat.id, working!.id);
    expect(stopped.status).toBe("interrupted_by_user");
    expect((await w.client.messages.stop(w.projectId, chat.id, working!.id)).status).toBe("interrupted_by_user");
    const missing = await w.client.chats.get(w.projectId, crypto.randomUUID()).catch((e) => e);
    expect(missing).toBeInstanceOf(ProblemError);
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
    const invalid = await w.client.chats.create(w.projectId, { title: "" }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });
    expect(invalid.errors[0].path).toBe("title");
  });

  it("creates a chat once per key, also when the first answer is lost", async () => {
    const p = await dropFirstAnswer("/chats");
    const w = await world(p.url);
    const chat = await w.client.chats.create(w.projectId, { title: "just one" });
    expect(p.dropped()).toBe(true);
    expect((await w.client.chats.list(w.projectId)).map((c) => c.id)).toEqual([chat.id]);
    await p.close();
  });

  it("verifies a real webhook delivery, and refuses one that was tampered with", async () => {
    const deliveries: { body: string; headers: Record<string, string | string[] | undefined> }[] = [];
    const receiver = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req
        .on("data", (d) => (body += d))
        .on("end", () => {
          deliveries.push({ body, headers: req.headers });
          res.writeHead(200).end();
        });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const w = await world();
    const hook = await w.client.webhooks.create(w.projectId, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ["message.completed"] });
    expect((await w.client.webhooks.list(w.projectId)).map((e) => e.id)).toEqual([hook.endpoint.id]);
    const chat = await w.client.chats.create(w.projectId, { title: "hooked" });
    const reply = await w.client.messages.sendAndWait(w.projectId, chat.id, { content: "tell my server" });
    for (let i = 0; i < 100 && deliveries.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const [got] = deliveries;
    const event = await verifyWebhook(hook.secret, got!.body, got!.headers);
    expect(event.type).toBe("message.completed");
    if (event.type === "message.completed") expect(event.data.message).toEqual(reply);
    await expect(verifyWebhook(hook.secret, got!.body.replace("tell", "sell"), got!.headers)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(`whsec_${btoa("another secret, 32 bytes long!!!")}`, got!.body, got!.headers)).rejects.toBeInstanceOf(WebhookVerificationError);
    expect((await w.client.webhooks.deliveries(w.projectId, hook.endpoint.id))[0]).toMatchObject({ eventType: "message.completed" });
    await w.client.webhooks.delete(w.projectId, hook.endpoint.id);
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
});
