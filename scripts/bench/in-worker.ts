// npm run bench:in-worker's Worker: the service itself, plus POST /loop, which sends one request to the service N
// times in a row from inside the Worker. Its CPU per request is then read without wrangler's proxy or the load
// generator, which share the cores with it under `npm run bench`. Started only as that bench's wrangler dev entry.
import type { Env } from "../../src/env";
import service from "../../src/index";

export * from "../../src/index";

type Loop = { n: number; url: string; method: string; headers: Record<string, string>; body?: string };

export default {
  ...service,
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname !== "/loop") return service.fetch(request, env, ctx);
    const { n, url, method, headers, body } = (await request.json()) as Loop;
    // As a client sends a body: with its length (without one, the body limit reads and copies it first).
    const sent = body === undefined ? headers : { ...headers, "content-length": String(new TextEncoder().encode(body).byteLength) };
    const statuses: Record<number, number> = {};
    for (let i = 0; i < n; i++) {
      const answer = await service.fetch(new Request(url, { method, headers: sent, body }), env, ctx);
      await answer.arrayBuffer();
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    }
    return Response.json({ statuses });
  },
} satisfies ExportedHandler<Env>;
