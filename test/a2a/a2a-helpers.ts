import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { answerOf, call } from "../helpers";

export const ORIGIN = "https://service.test";
export const agentPath = (projectId: string) => `/a2a/projects/${projectId}`;

let ids = 0;
/** A JSON-RPC request to a project's agent, as an A2A 1.0 client sends it (A2A-Version: 1.0). */
export function rpc(token: string, projectId: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return call("POST", agentPath(projectId), { token, headers: { "a2a-version": "1.0", ...headers }, body: { jsonrpc: "2.0", id: ++ids, method, params } });
}

/** The same with the v0.3 wire (no A2A-Version header). */
export function legacyRpc(token: string, projectId: string, method: string, params: Record<string, unknown> = {}) {
  return call("POST", agentPath(projectId), { token, body: { jsonrpc: "2.0", id: ++ids, method, params } });
}

/** The result of a call that must succeed. */
export async function resultOf(answer: Promise<Awaited<ReturnType<typeof call>>>) {
  const r = await answer;
  expect(r.status, r.text).toBe(200);
  expect(r.json.error, r.text).toBeUndefined();
  return r.json.result;
}

/** The JSON-RPC error of a call that must fail with one (HTTP 200). */
export async function errorOf(answer: Promise<Awaited<ReturnType<typeof call>>>) {
  const r = await answer;
  expect(r.status, r.text).toBe(200);
  expect(r.json.error, r.text).toBeDefined();
  return r.json.error as { code: number; message: string; data?: { reason: string; domain: string }[] };
}

/** The reasons an error's details name, A2A's and the service's. */
export const reasonsOf = (error: { data?: { reason: string }[] }) => (error.data ?? []).map((detail) => detail.reason);

let messages = 0;
/** A user message as A2A sends it. */
export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `msg-${++messages}-${crypto.randomUUID()}`,
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra,
});

export type SseFrame = { id: string | undefined; data: any };

/** A streaming call: the response, and its frames once it has ended (read whole). */
export async function openStream(token: string, projectId: string, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await exports.default.fetch(
    new Request(`${ORIGIN}${agentPath(projectId)}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "a2a-version": "1.0", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++ids, method, params }),
    }),
  );
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) return { response, frames: async () => [] as SseFrame[], answer: answerOf(response) };
  const frames = async (): Promise<SseFrame[]> => {
    const text = await response.text();
    return text
      .split("\n\n")
      .filter((frame) => frame.includes("data: "))
      .map((frame) => {
        const lines = frame.split("\n");
        const id = lines.find((line) => line.startsWith("id: "))?.slice(4);
        return { id, data: JSON.parse(lines.find((line) => line.startsWith("data: "))!.slice(6)) };
      });
  };
  return { response, frames, answer: undefined };
}
