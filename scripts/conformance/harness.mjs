// What the protocols' own suites need around a fresh wrangler dev: an account with a token, a proxy that adds it, a child's exit.
import { randomUUID } from "node:crypto";
import { createServer, request } from "node:http";
import { jsonApi, must } from "../bench/json-api.mjs";

/** An account owning a project, and a read+write personal API token of it. */
export async function seededToken(base, adminToken, name) {
  const api = jsonApi(base);
  const email = `${name}-${randomUUID()}@example.test`;
  const account = must(await api("POST", "/admin/accounts", adminToken, { email, password: "conformance-password", credits: 100000 }), 201);
  const project = must(await api("POST", "/admin/projects", adminToken, { name, ownerAccountId: account.id }), 201);
  const session = must(await api("POST", "/auth/token", null, { email, password: "conformance-password" }), 200).token;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const token = must(await api("POST", "/auth/api-tokens", session, { name, scopes: ["chat:read", "chat:write"], expiresAt }), 201).token;
  return { token, projectId: project.id };
}

/** Loopback only: every request as it came, with the token's Authorization added, the answer streamed back as it comes. */
export function startTokenProxy({ port, proxyPort, token }) {
  const server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers, host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` };
    const forwarded = request({ host: "127.0.0.1", port, path: incoming.url, method: incoming.method, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.on("error", () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(proxyPort, "127.0.0.1", () => resolve(server)));
}

/** The exit status of a child process, once it has exited. */
export function exited(child) {
  return new Promise((resolve) => child.on("close", (code) => resolve(code ?? 1)));
}
