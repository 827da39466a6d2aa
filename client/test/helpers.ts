import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import { admin as workerAdmin, world as portableWorld } from "./world.ts";

export const base = () => inject("base");

const worker = () => ({ base: base(), adminToken: inject("adminToken") });

/** An account owning a project, signed in through the client, with a token; the client talks to `baseUrl` (a proxy, say). */
export const world = (baseUrl = base()) => portableWorld(worker(), baseUrl);

/** A call of the Worker's admin API: its JSON body. */
export const admin = (method: string, path: string, body?: unknown) => workerAdmin(worker(), method, path, body);

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
