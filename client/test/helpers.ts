import { randomUUID } from "node:crypto";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import { AccountClient, ProjectChatClient } from "../src/index.ts";

export const base = () => inject("base");

async function admin(method: string, path: string, body?: unknown) {
  const r = await fetch(`${base()}${path}`, {
    method,
    headers: { authorization: `Bearer ${inject("adminToken")}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** An account owning a project, signed in through the client, with a token; the client talks to `baseUrl` (a proxy, say). */
export async function world(baseUrl = base()) {
  const email = `client-${randomUUID()}@example.test`;
  const password = `pw-${randomUUID()}`;
  const account = await admin("POST", "/admin/accounts", { email, password, credits: 1000 });
  const project = await admin("POST", "/admin/projects", { name: "client tests", ownerAccountId: account.id });
  const session = await AccountClient.signIn({ baseUrl: base(), email, password });
  const { token } = await session.tokens.create({ name: "client tests", scopes: ["chat:read", "chat:write"], expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
  return { email, password, session, token, projectId: project.id as string, client: new ProjectChatClient({ baseUrl, token }) };
}

type Intercept = (req: IncomingMessage, res: ServerResponse, forward: () => Promise<IncomingMessage>) => Promise<void> | void;

/** A proxy in front of the Worker; `intercept` may answer a request itself or forward it and meddle with the answer. */
export async function proxy(intercept: Intercept) {
  const server = createServer(async (req, res) => {
    const forward = () =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const upstream = request(`${base()}${req.url}`, { method: req.method, headers: req.headers }, resolve);
        upstream.on("error", reject);
        req.pipe(upstream);
      });
    await intercept(req, res, forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Passes a request through unchanged. */
export async function pass(res: ServerResponse, forward: () => Promise<IncomingMessage>) {
  const answer = await forward();
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  answer.pipe(res);
}

/** A proxy that lets the Worker take the first POST to a path ending so, then drops its answer: the client never hears it. */
export async function dropFirstAnswer(pathEnd: string) {
  let dropped = false;
  const p = await proxy(async (req, res, forward) => {
    if (req.method !== "POST" || !req.url!.endsWith(pathEnd) || dropped) return pass(res, forward);
    dropped = true;
    const answer = await forward();
    answer.resume();
    answer.on("end", () => req.socket.destroy());
  });
  return { ...p, dropped: () => dropped };
}
